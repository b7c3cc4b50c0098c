/**
 * @module What a limited key may still do while the store is down, under `GATEWAY_STORE_OUTAGE=allow`: its
 * requests are admitted past each limit the store would have to check (a rate-limit claim, a decision on its
 * quotas or concurrency), up to a bound per key, limit and minute in this process. The bound is what makes the
 * allowance a known quantity: per minute of outage and per gateway process, at most `perMinute` requests of a
 * key beyond its rpm (never more than the rpm itself), and as many beyond its quotas, each of which may bill
 * its prompt and the output it was capped to.
 *
 * Past the bound, or under `closed`, the refusal stands: 503 `store_unavailable`.
 */

export type OutageLimit = "rate" | "quota";

export class OutageAllowance {
  #minute = -1;
  /** Requests admitted so far this minute, by limit and key. */
  readonly #taken = new Map<string, number>();

  constructor(readonly perMinute: number) {}

  /**
   * Whether one more request of `keyId` may pass `limit` at `now`, counting it if so. `cap`: a lower bound of
   * the limit's own (a key's rpm).
   */
  take(limit: OutageLimit, keyId: string, now: number, cap = Infinity): boolean {
    const minute = Math.floor(now / 60_000);
    if (minute !== this.#minute) {
      // Only this minute's counts matter: memory follows the keys seen in one minute of outage.
      this.#minute = minute;
      this.#taken.clear();
    }
    const id = `${limit}\u0000${keyId}`;
    const taken = this.#taken.get(id) ?? 0;
    if (taken >= Math.min(this.perMinute, cap)) return false;
    this.#taken.set(id, taken + 1);
    return true;
  }
}
