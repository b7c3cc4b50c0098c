/**
 * @module Policy: what an authenticated key may do right now. The checks run in the spec's order (expiry,
 * IP, referrer domain, rate limit, quotas), cheapest first, with one exception: a token quota this process
 * already knows to be used up refuses before the rate limit, since knowing it costs nothing. So a request
 * refused for where it came from or for a quota never spends a rate-limit slot, and one refused by `reserve`
 * (a quota, a concurrency limit, a store that cannot tell) gives back the slot `admit` spent for it: the rate
 * limit counts the requests it let through, and a client refused for its quota is not told next that its
 * rate is spent. `admit` decides all that can be decided before the body is read; `reserve`, once the request
 * is shaped, holds what it can cost against the token quotas and takes its place under the concurrency limits
 * (`reservations.ts`). Knows keys, users and the store's counters; of a request only what it can cost,
 * nothing of backends.
 *
 * A network store that is down (`StoreLink`) refuses what needs it with 503 `store_unavailable`, or under
 * `allow` admits past it within a bound (`outage_allowance.ts`); what this process holds in memory (claimed
 * rate-limit slots, quota allowances, known used-up quotas) goes on deciding either way. While more usage
 * records wait for the store than the ledger keeps (`backlog`), every key's requests are refused: a request is
 * not answered when its record could not be kept.
 */
import { KeyExpired, RateLimited, rateLimitHeaders, StoreUnavailable } from "../errors.ts";
import { StoreLink, StoreUnreachable } from "../store/link.ts";
import type { ChatRequest } from "../chat/types.ts";
import type { KeyRecord, UserRecord } from "../store/records.ts";
import type { LiveTotals } from "../usage/live_totals.ts";
import type { LedgerProgress } from "../usage/mod.ts";
import { checkDomain, checkIp } from "./allow_lists.ts";
import { clientAddress } from "./client_address.ts";
import { RangeList } from "./ip_address.ts";
import { limitsOf, QuotaCheck } from "./quotas.ts";
import { type RateDecision, RateLimiter } from "./rate_limit.ts";
import { Hold, Reservations } from "./reservations.ts";
import { OutageAllowance, type OutageLimit } from "./outage_allowance.ts";
import { askedOutput, promptEstimate } from "./token_bounds.ts";

export { parseAddress, parseRange } from "./ip_address.ts";
export type { Hold } from "./reservations.ts";

export interface PolicyOptions {
  kv: Deno.Kv;
  /** Proxies whose `X-Forwarded-For` is believed (GATEWAY_TRUST_PROXY). */
  trustProxy: readonly string[];
  totals: LiveTotals;
  /** The current user records, by name. */
  users: () => ReadonlyMap<string, UserRecord>;
  /** The usage ledger: its flush, its records' numbers and the mark a decision reads them against. */
  ledger: LedgerProgress;
  /** Output reserved for a request on a token quota that bounds its output nowhere (GATEWAY_QUOTA_OUTPUT_TOKENS). */
  defaultOutput: number;
  /** Lease of this process's holdings in the store, ms (default 30 s). */
  leaseMs?: number;
  /** Bounds the wait for a network store, and says whether it is down; by default the store is local. */
  link?: StoreLink;
  /** While the store is down: refuse what needs it (default), or admit up to `rpm` per key, minute and limit. */
  outage?: { mode: "closed" | "allow"; rpm: number };
  /** The usage records waiting to be written; while `full`, requests are refused. */
  backlog?: { readonly full: boolean; readonly backlog: number };
}

function backlogFull(records: number): StoreUnavailable {
  return new StoreUnavailable(
    "usage ledger",
    undefined,
    `The gateway cannot keep the usage of more requests until its store takes the ${records} records ` +
      "waiting for it; try again shortly",
  );
}

/** What the caller presented besides its key. */
export interface Caller {
  headers: Headers;
  /** The socket peer's address. */
  peer?: string;
}

const NO_HEADERS: Record<string, string> = {};

function afterRate(rate: RateDecision, now: number): Record<string, string> {
  if (!rate.admitted) throw new RateLimited(rate.limit, rate.resetAt, now);
  return rateLimitHeaders(rate.limit, rate.remaining, rate.resetAt);
}

export class Policy {
  readonly #trusted: RangeList;
  readonly #rate: RateLimiter;
  readonly #quotas: QuotaCheck;
  readonly #reservations: Reservations;
  readonly #outage?: OutageAllowance;
  readonly #backlog?: { readonly full: boolean; readonly backlog: number };

  constructor(private readonly options: PolicyOptions) {
    const link = options.link ?? new StoreLink({ remote: false, timeoutMs: Infinity });
    this.#trusted = RangeList.strict(options.trustProxy);
    this.#rate = new RateLimiter(options.kv, link);
    this.#quotas = new QuotaCheck(options.totals);
    if (options.outage?.mode === "allow") this.#outage = new OutageAllowance(options.outage.rpm);
    this.#backlog = options.backlog;
    this.#reservations = new Reservations({
      kv: link.wrap(options.kv),
      ledger: options.ledger,
      defaultOutput: options.defaultOutput,
      leaseMs: options.leaseMs,
    });
  }

  /**
   * Throws the refusal (403, 429, or 503 when a limit cannot be checked), or returns the headers an admitted
   * request's response carries (the rate-limit state, when the key has a limit). Decided at once from what
   * this process holds; a promise only when a rate-limit claim or a quota total must go to the store.
   */
  admit(
    key: KeyRecord,
    caller: Caller,
    now: number,
  ): Record<string, string> | Promise<Record<string, string>> {
    if (this.#backlog?.full) throw backlogFull(this.#backlog.backlog);
    this.checkAccess(key, caller, now);
    this.#quotas.enforce(key, this.#userOf(key), now);
    const rpm = key.rpm;
    if (rpm === undefined) return NO_HEADERS;
    const rate = this.#rate.admit(key.id, rpm, now);
    if (!(rate instanceof Promise)) return afterRate(rate, now);
    return rate.then((decided) => afterRate(decided, now), (refusal) => {
      if (!this.#pastOutage(refusal, "rate", key.id, now, rpm)) throw refusal;
      return NO_HEADERS;
    });
  }

  /** Under `allow`, whether a refusal because the store is down is passed over (counted) for this request. */
  #pastOutage(refusal: unknown, limit: OutageLimit, keyId: string, now: number, cap?: number): boolean {
    return this.#outage !== undefined && refusal instanceof StoreUnavailable &&
      refusal.cause instanceof StoreUnreachable && this.#outage.take(limit, keyId, now, cap);
  }

  #userOf(key: KeyRecord): UserRecord | undefined {
    return key.user === undefined ? undefined : this.options.users().get(key.user);
  }

  /**
   * Reserves what the shaped request can cost against the token quotas of the key and its user, and takes
   * its place under their concurrency limits; throws the refusal (429, or 503 when the store cannot tell).
   * Where a quota bounds the request's output, the request's `numPredict` is lowered to what was reserved.
   * Undefined at once for a key and user without such limits; otherwise the hold its account settles.
   * `now` is the instant `admit` was given: a refusal gives back the rate-limit slot taken then.
   */
  reserve(key: KeyRecord, request: ChatRequest, now: number): Hold | undefined | Promise<Hold> {
    const limits = limitsOf(key, this.#userOf(key), now);
    if (limits.owners.length === 0) return undefined;
    const prompt = limits.caps.length ? promptEstimate(request) : 0;
    const asked = { limits, now, prompt, output: askedOutput(request, key) };
    const fit = (hold: Hold) => {
      if (hold.output !== undefined) request.options.numPredict = hold.output;
      return hold;
    };
    const held = this.#reservations.reserve(key.id, asked);
    if (!(held instanceof Promise)) return fit(held);
    const rpm = key.rpm;
    return held.then(fit, (refusal) => {
      if (this.#pastOutage(refusal, "quota", key.id, now)) {
        // Nothing held: what it bills reaches the counters with its record, once the store is back.
        const output = limits.caps.length ? asked.output ?? this.options.defaultOutput : undefined;
        return fit(new Hold(() => {}, [], output));
      }
      if (rpm !== undefined) this.#rate.giveBack(key.id, rpm, now);
      throw refusal;
    });
  }

  /**
   * The checks that spend nothing (expiry, IP and domain allow-lists): all that model discovery asks, since
   * listing a model must cost no rate-limit slot.
   */
  checkAccess(key: KeyRecord, caller: Caller, now: number): void {
    if (key.expiresAt !== undefined && Date.parse(key.expiresAt) <= now) throw new KeyExpired(key.expiresAt);
    if (key.allowIps.length) {
      checkIp(key, clientAddress(caller.peer, caller.headers.get("x-forwarded-for"), this.#trusted));
    }
    checkDomain(key, caller.headers);
  }

  /** Takes this process's holdings out of the store; after the ledger's last flush. */
  async close(): Promise<void> {
    await this.#reservations.close();
  }
}
