/**
 * @module Who may see the admin page, its feed and the metrics: a holder of `GATEWAY_ADMIN_TOKEN`, by bearer
 * header or by the session cookie the login form sets. Without a configured token everything stays closed.
 *
 * Both comparisons run over fixed-length HMACs with a constant-time compare, so neither the token's length nor
 * its prefix leaks through timing. The cookie never holds the token: it holds an expiry and an HMAC of it
 * keyed by the token, so changing the token ends every session.
 *
 * Forms that change something carry a token derived from the session cookie the same way (an HMAC keyed by the
 * admin token), so no session store is needed and another site, which cannot read the cookie, cannot forge it.
 */
import { createHmac, timingSafeEqual } from "node:crypto";

export const SESSION_COOKIE = "gw_admin";
const SESSION_MS = 12 * 60 * 60 * 1000;

export type AdminAccess = "ok" | "closed" | "unauthenticated";

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

export class AdminGate {
  /** A per-process key for comparing presented tokens, so equal-length digests are what gets compared. */
  readonly #compareKey = crypto.randomUUID();
  readonly #tokenMac?: Buffer;

  constructor(private readonly token: string | undefined, private readonly now: () => number = Date.now) {
    if (token) this.#tokenMac = mac(this.#compareKey, token);
  }

  get open(): boolean {
    return this.#tokenMac !== undefined;
  }

  tokenMatches(candidate: string): boolean {
    if (!this.#tokenMac) return false;
    return timingSafeEqual(mac(this.#compareKey, candidate), this.#tokenMac);
  }

  check(request: Request): AdminAccess {
    if (!this.token) return "closed";
    const auth = request.headers.get("authorization");
    if (auth?.startsWith("Bearer ")) {
      return this.tokenMatches(auth.slice(7).trim()) ? "ok" : "unauthenticated";
    }
    const session = cookieValue(request.headers.get("cookie"), SESSION_COOKIE);
    return session !== undefined && this.#sessionValid(session) ? "ok" : "unauthenticated";
  }

  /** The form token of the request's session; empty for a bearer caller, whom no browser impersonates. */
  formToken(request: Request): string {
    const session = this.#session(request);
    return session === undefined ? "" : mac(this.token!, `form:${session}`).toString("base64url");
  }

  /** Whether a form post carries its session's form token (always for a bearer caller). */
  formTokenValid(request: Request, given: string): boolean {
    if (request.headers.get("authorization")?.startsWith("Bearer ")) return true;
    const expected = Buffer.from(this.formToken(request));
    const actual = Buffer.from(given);
    return expected.length > 0 && actual.length === expected.length && timingSafeEqual(actual, expected);
  }

  /** A short tag naming the session in the audit trail without revealing its cookie. */
  sessionTag(request: Request): string {
    const session = this.#session(request);
    if (session === undefined) return "bearer";
    return mac(this.token!, `tag:${session}`).toString("hex").slice(0, 8);
  }

  #session(request: Request): string | undefined {
    if (!this.token) return undefined;
    return cookieValue(request.headers.get("cookie"), SESSION_COOKIE);
  }

  /** A `Set-Cookie` value opening a session; `Secure` when the page was reached over https. */
  sessionCookie(secure: boolean): string {
    const expires = this.now() + SESSION_MS;
    const value = `${expires}.${mac(this.token!, `session:${expires}`).toString("base64url")}`;
    return this.#cookie(value, Math.floor(SESSION_MS / 1000), secure);
  }

  clearCookie(secure: boolean): string {
    return this.#cookie("", 0, secure);
  }

  #cookie(value: string, maxAge: number, secure: boolean): string {
    const flags = [`Max-Age=${maxAge}`, "Path=/", "HttpOnly", "SameSite=Strict"];
    if (secure) flags.push("Secure");
    return [`${SESSION_COOKIE}=${value}`, ...flags].join("; ");
  }

  #sessionValid(value: string): boolean {
    const dot = value.indexOf(".");
    const expires = Number(value.slice(0, dot));
    if (dot < 1 || !Number.isSafeInteger(expires) || expires <= this.now()) return false;
    // Compared as text: base64url decoding ignores the last character's spare bits, so comparing bytes would
    // accept several spellings of one signature.
    const given = Buffer.from(value.slice(dot + 1));
    const expected = Buffer.from(mac(this.token!, `session:${expires}`).toString("base64url"));
    return given.length === expected.length && timingSafeEqual(given, expected);
  }
}
