/**
 * @module Policy: what an authenticated key may do right now. The checks run in the spec's order (expiry,
 * IP, referrer domain, rate limit, quotas), cheapest first, so a request refused for where it came from never
 * spends a rate-limit slot. Knows keys, users and the store's counters; nothing of request bodies or backends.
 */
import { KeyExpired, RateLimited, rateLimitHeaders } from "../errors.ts";
import type { KeyRecord, UserRecord } from "../store/records.ts";
import type { LiveTotals } from "../usage/live_totals.ts";
import { checkDomain, checkIp } from "./allow_lists.ts";
import { clientAddress } from "./client_address.ts";
import { RangeList } from "./ip_address.ts";
import { QuotaCheck } from "./quotas.ts";
import { type RateDecision, RateLimiter } from "./rate_limit.ts";

export { parseAddress, parseRange } from "./ip_address.ts";

export interface PolicyOptions {
  kv: Deno.Kv;
  /** Proxies whose `X-Forwarded-For` is believed (GATEWAY_TRUST_PROXY). */
  trustProxy: readonly string[];
  totals: LiveTotals;
  /** The current user records, by name. */
  users: () => ReadonlyMap<string, UserRecord>;
  /** How old a total far from its cap may be before it is read again in the background, ms. */
  quotaRefreshMs?: number;
}

/** What the caller presented besides its key. */
export interface Caller {
  headers: Headers;
  /** The socket peer's address. */
  peer?: string;
}

const NO_HEADERS: Record<string, string> = {};

export class Policy {
  readonly #trusted: RangeList;
  readonly #rate: RateLimiter;
  readonly #quotas: QuotaCheck;

  constructor(private readonly options: PolicyOptions) {
    this.#trusted = RangeList.strict(options.trustProxy);
    this.#rate = new RateLimiter(options.kv);
    this.#quotas = new QuotaCheck(options.totals, options.quotaRefreshMs);
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
    this.checkAccess(key, caller, now);
    if (key.rpm === undefined) return this.#enforceQuotas(key, now, NO_HEADERS);
    const rate = this.#rate.admit(key.id, key.rpm, now);
    return rate instanceof Promise
      ? rate.then((decided) => this.#afterRate(key, decided, now))
      : this.#afterRate(key, rate, now);
  }

  #afterRate(key: KeyRecord, rate: RateDecision, now: number) {
    if (!rate.admitted) throw new RateLimited(rate.limit, rate.resetAt, now);
    return this.#enforceQuotas(key, now, rateLimitHeaders(rate.limit, rate.remaining, rate.resetAt));
  }

  #enforceQuotas(key: KeyRecord, now: number, headers: Record<string, string>) {
    const user = key.user === undefined ? undefined : this.options.users().get(key.user);
    const enforced = this.#quotas.enforce(key, user, now);
    return enforced ? enforced.then(() => headers) : headers;
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

  async close(): Promise<void> {
    await this.#quotas.close();
  }
}
