/**
 * @module Who may see the admin page, its feed and the metrics: a holder of `GATEWAY_ADMIN_TOKEN`, by bearer
 * header or by the session cookie the login form sets. Without a configured token everything stays closed.
 *
 * A presented token is compared as a fixed-length HMAC with a constant-time compare, so neither the token's
 * length nor its prefix leaks through timing. A wrong one counts against the caller's address
 * (`admin_throttle.ts`), and is counted, logged and audited without its value (`failed_logins.ts`); while an
 * address must wait, its attempts get 429 with `Retry-After`, unchecked.
 *
 * A session is a row in the store (`sessions.ts`) that logout deletes. The cookie holds the session's random
 * id and an HMAC of it keyed by the token: a forged cookie is refused without reading the store, and changing
 * the token ends every session. A wrong, ended or expired cookie is not a guess at the token (its id has 256
 * random bits): it gets the login form, and counts nowhere.
 *
 * Forms that change something carry a token derived from the session cookie the same way (an HMAC keyed by the
 * admin token), so another site, which cannot read the cookie, cannot forge it.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import type { Client } from "../http/client.ts";
import type { RangeList } from "../policy/ip_address.ts";
import { auditId, type AuditRecord } from "../audit/mod.ts";
import { StoreUnavailable } from "../errors.ts";
import { StoreUnreachable } from "../store/link.ts";
import { callerAddress } from "./caller_address.ts";
import { AdminThrottle, throttleKey } from "./admin_throttle.ts";
import { type AuthVia, FailedLogins, type FailureReason } from "./failed_logins.ts";
import { AdminSessions, SESSION_MS } from "./sessions.ts";

export const SESSION_COOKIE = "gw_admin";
/** How often a long request of a session (the live feed) looks whether the session still exists. */
const SESSION_RECHECK_MS = 5_000;

/** Refused unchecked: the caller's address must wait this many seconds. */
export interface Throttled {
  retryAfterS: number;
}

export type AdminAccess = "ok" | "closed" | "unauthenticated" | Throttled;

export interface AdminGateOptions {
  token?: string;
  now: () => number;
  /** The store, as a request may wait for it (bounded on a network store). */
  kv: Deno.Kv;
  /** Proxies whose `X-Forwarded-For` names the caller (`GATEWAY_TRUST_PROXY`). */
  trustedProxies: RangeList;
  /** Told of every failed attempt (the metrics). */
  countFailure?: (via: AuthVia, reason: FailureReason) => void;
}

function mac(secret: string, text: string): Buffer {
  return createHmac("sha256", secret).update(text).digest();
}

function cookieValue(header: string | null, name: string): string | undefined {
  for (const part of (header ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

function bearer(request: Request): string | undefined {
  const auth = request.headers.get("authorization");
  return auth?.startsWith("Bearer ") ? auth.slice(7).trim() : undefined;
}

/** A store that does not answer leaves sessions unknown: refused with 503, not taken for logged out. */
async function orUnavailable<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof StoreUnreachable) throw new StoreUnavailable("admin session", error);
    throw error;
  }
}

export class AdminGate {
  /** A per-process key for comparing presented tokens, so equal-length digests are what gets compared. */
  readonly #compareKey = crypto.randomUUID();
  readonly #tokenMac?: Buffer;
  readonly #token?: string;
  readonly #now: () => number;
  readonly #trusted: RangeList;
  readonly #throttle: AdminThrottle;
  readonly #failures: FailedLogins;
  readonly #sessions: AdminSessions;

  constructor(options: AdminGateOptions) {
    this.#token = options.token;
    if (options.token) this.#tokenMac = mac(this.#compareKey, options.token);
    this.#now = options.now;
    this.#trusted = options.trustedProxies;
    this.#throttle = new AdminThrottle(options.now);
    this.#failures = new FailedLogins({ kv: options.kv, now: options.now, count: options.countFailure });
    this.#sessions = new AdminSessions(options.kv, options.now);
  }

  get open(): boolean {
    return this.#tokenMac !== undefined;
  }

  /** The address the caller is known by: the client's own behind a trusted proxy. */
  callerAddress(request: Request, client: Client): string | undefined {
    return callerAddress(request, client, this.#trusted);
  }

  /** Admits a bearer token or (unless `bearerOnly`) a session cookie. */
  async check(
    request: Request,
    client: Client,
    options: { bearerOnly?: boolean } = {},
  ): Promise<AdminAccess> {
    if (!this.#token) return "closed";
    const token = bearer(request);
    if (token !== undefined) return this.#try(token, "bearer", request, client);
    if (options.bearerOnly) return "unauthenticated";
    const id = this.#sessionId(request);
    return id !== undefined && await orUnavailable(this.#sessions.active(id)) ? "ok" : "unauthenticated";
  }

  /** The login form's token: a session cookie (`Set-Cookie` value) when right, else why not. */
  async logIn(
    request: Request,
    client: Client,
    token: string,
    secure: boolean,
  ): Promise<{ setCookie: string } | Exclude<AdminAccess, "ok">> {
    if (!this.#token) return "closed";
    const access = this.#try(token, "form", request, client);
    if (access !== "ok") return access;
    const address = this.callerAddress(request, client);
    const { id } = await orUnavailable(this.#sessions.open((id, expires) =>
      this.#entry(
        "admin.login",
        { expiresAt: { after: new Date(expires).toISOString() } },
        address,
        this.#tag(this.#cookieFor(id)),
      )
    ));
    const value = this.#cookieFor(id);
    return { setCookie: this.#cookie(value, Math.floor(SESSION_MS / 1000), secure) };
  }

  /** Ends the request's session, if it has one that is open. */
  async logOut(request: Request, client: Client): Promise<void> {
    const id = this.#sessionId(request);
    if (id === undefined) return;
    const address = this.callerAddress(request, client);
    const session = this.sessionTag(request);
    await orUnavailable(this.#sessions.end(id, () => this.#entry("admin.logout", {}, address, session)));
  }

  /**
   * `signal`, also aborted once the request's session has ended (looked up every few seconds), so that a live
   * feed opened with a session stops at logout; a bearer caller's is `signal` itself. While the store does not
   * answer, the session is taken to last: no logout could have been written either.
   */
  untilSessionEnds(request: Request, signal: AbortSignal): AbortSignal {
    const id = bearer(request) === undefined ? this.#sessionId(request) : undefined;
    if (id === undefined || signal.aborted) return signal;
    const ended = new AbortController();
    const timer = setInterval(async () => {
      if (!await this.#sessions.active(id).catch(() => true)) ended.abort();
    }, SESSION_RECHECK_MS);
    const stop = () => clearInterval(timer);
    signal.addEventListener("abort", stop, { once: true });
    ended.signal.addEventListener("abort", stop, { once: true });
    return AbortSignal.any([signal, ended.signal]);
  }

  /** The form token of the request's session; empty for a bearer caller, whom no browser impersonates. */
  formToken(request: Request): string {
    const session = this.#session(request);
    return session === undefined ? "" : mac(this.#token!, `form:${session}`).toString("base64url");
  }

  /** Whether a form post carries its session's form token (always for a bearer caller). */
  formTokenValid(request: Request, given: string): boolean {
    if (bearer(request) !== undefined) return true;
    const expected = Buffer.from(this.formToken(request));
    const actual = Buffer.from(given);
    return expected.length > 0 && actual.length === expected.length && timingSafeEqual(actual, expected);
  }

  /** A short tag naming the session in the audit trail without revealing its cookie. */
  sessionTag(request: Request): string {
    const session = this.#session(request);
    return session === undefined ? "bearer" : this.#tag(session);
  }

  clearCookie(secure: boolean): string {
    return this.#cookie("", 0, secure);
  }

  /** Writes the failed attempts' last counts. */
  close(): Promise<void> {
    return this.#failures.close();
  }

  #try(token: string, via: AuthVia, request: Request, client: Client): AdminAccess {
    const address = this.callerAddress(request, client);
    const retryAfterS = this.#throttle.retryAfter(address);
    // Reported as the throttle counts them, so an IPv6 client walking through its /64 fills one entry.
    if (retryAfterS > 0) {
      this.#failures.note(throttleKey(address), via, "throttled");
      return { retryAfterS };
    }
    if (timingSafeEqual(mac(this.#compareKey, token), this.#tokenMac!)) return "ok";
    this.#throttle.failed(address);
    this.#failures.note(throttleKey(address), via, "wrong_token");
    return "unauthenticated";
  }

  #entry(
    action: string,
    changes: AuditRecord["changes"],
    address: string | undefined,
    session?: string,
  ): AuditRecord {
    const time = new Date(this.#now());
    return {
      id: auditId(time),
      time: time.toISOString(),
      actor: { kind: "page", ...(session ? { session } : {}), ...(address ? { address } : {}) },
      action,
      target: "admin",
      changes,
    };
  }

  #session(request: Request): string | undefined {
    if (!this.#token) return undefined;
    return cookieValue(request.headers.get("cookie"), SESSION_COOKIE);
  }

  #tag(cookie: string): string {
    return mac(this.#token!, `tag:${cookie}`).toString("hex").slice(0, 8);
  }

  #cookieFor(id: string): string {
    return `${id}.${mac(this.#token!, `session:${id}`).toString("base64url")}`;
  }

  /** The session id of the request's cookie, if the cookie was made with this token. */
  #sessionId(request: Request): string | undefined {
    const value = this.#session(request);
    const dot = value?.indexOf(".") ?? -1;
    if (value === undefined || dot < 1) return undefined;
    const id = value.slice(0, dot);
    // Compared as text: base64url decoding ignores the last character's spare bits, so comparing bytes would
    // accept several spellings of one signature.
    const given = Buffer.from(value);
    const expected = Buffer.from(this.#cookieFor(id));
    return given.length === expected.length && timingSafeEqual(given, expected) ? id : undefined;
  }

  #cookie(value: string, maxAge: number, secure: boolean): string {
    const flags = [`Max-Age=${maxAge}`, "Path=/", "HttpOnly", "SameSite=Strict"];
    if (secure) flags.push("Secure");
    return [`${SESSION_COOKIE}=${value}`, ...flags].join("; ");
  }
}
