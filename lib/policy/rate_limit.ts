/**
 * @module The per-minute rate limit, exact across every gateway process that shares the store, without a
 * store round trip per request.
 *
 * Design. The limit counts requests per calendar minute (UTC, aligned to :00). The store holds one counter
 * per key and minute, `["rate", keyId, minute]`: the slots *claimed* in that minute by all processes. A
 * process admits a request by taking a slot it already claimed, in memory. When it has none left it claims
 * more with one check-and-set commit (read the counter; write counter + n only if nobody wrote in between;
 * otherwise read again), never beyond the limit. Requests that arrive while a claim is in flight wait for it
 * and are served by the next claim together, so a burst costs one commit per process, not one per request.
 *
 * Guarantees.
 * - Never more than L admitted in a minute, however many requests and processes: every admission spends a
 *   slot, and the commits together never claim more than L slots (the check makes a concurrent claim retry).
 * - No refusal while the minute has unclaimed slots: a process refuses only once the counter itself reached
 *   L. For small limits a claim takes exactly what its waiting requests need, so nothing is held back.
 * - For large limits a claim also takes headroom for the requests to come (1% of L, at most 1,000), so the
 *   steady state costs one commit per hundred-odd requests. Headroom left unused when the minute ends is
 *   lost: at most 1% of L per process goes unserved, which is the price of keeping commits off the hot path.
 * - A lowered limit takes effect at once: slots claimed under the old limit are dropped.
 * - A request admitted here and then refused by a later check of the policy (a token quota, a concurrency
 *   limit) gives its slot back (`giveBack`), in memory: the slot stays claimed by this process, whose next
 *   request of the key takes it, so the store is not written again. Another process sharing the store does
 *   not see it, as with headroom: it finds the counter as the claims left it.
 * - `remaining` is as this process last saw the counter; other processes may have spent some since.
 *
 * Cost. A claim is one round trip when this process wrote the counter last (or nobody wrote it yet this
 * minute): the commit checks the versionstamp of that write instead of reading the counter first. Should the
 * check fail, another process claims this key's slots too: the counter is read, and in that minute every
 * later claim reads it first (two round trips), since guessing would most often be wrong.
 *
 * A network store that does not answer in time (`StoreLink`) makes the claim fail with `StoreUnavailable`
 * (503), whose cause is `StoreUnreachable`. The commit may still land once the store is back (Deno's client
 * keeps sending it): its slots are then this process's, as if the claim had succeeded late, and no more are
 * ever claimed than the limit, since the check makes a commit that lands late and a later claim exclusive.
 */
import { StoreUnavailable } from "../errors.ts";
import { StoreLink, StoreUnreachable } from "../store/link.ts";

const MINUTE_MS = 60_000;
/** Counters outlive their minute a little, for a late reader; the store deletes them after. */
const COUNTER_TTL_MS = 2 * MINUTE_MS;
const HEADROOM_FRACTION = 0.01;
const MAX_HEADROOM = 1_000;
/** A commit loses a race only to another claim that succeeded, so this bounds nothing real; it stops a loop. */
const MAX_CLAIM_ATTEMPTS = 100;

export interface RateDecision {
  admitted: boolean;
  limit: number;
  remaining: number;
  /** When the current minute ends, ms since the epoch. */
  resetAt: number;
}

interface KeyWindow {
  minute: number;
  limit: number;
  /** Slots this process claimed in this minute, and how many of them it spent. */
  claimed: number;
  spent: number;
  /** The shared counter after this process's last claim. */
  counter: number;
  /** The counter reached the limit: nothing more can be claimed this minute. */
  exhausted: boolean;
  /**
   * The versionstamp of `counter` when this process wrote or read it last and nobody is known to have written
   * it since (null: it did not exist); undefined when it must be read.
   */
  versionstamp: string | null | undefined;
  /** Another process claimed in this minute too: read before each claim instead of guessing. */
  shared: boolean;
  /** Requests waiting for a slot. */
  waiting: number;
  claim?: Promise<void>;
}

export function rateCounterKey(keyId: string, minute: number): Deno.KvKey {
  return ["rate", keyId, minute];
}

export class RateLimiter {
  readonly #windows = new Map<string, KeyWindow>();

  /** `link` bounds the wait for a network store; by default the store is a local one. */
  constructor(
    private readonly kv: Deno.Kv,
    private readonly link = new StoreLink({ remote: false, timeoutMs: Infinity }),
  ) {}

  /**
   * Admits or refuses one request of `keyId` at time `now`, against `limit` requests per minute. Decided at
   * once while this process holds a slot (or knows the minute is used up); a promise only when a claim runs.
   */
  admit(keyId: string, limit: number, now: number): RateDecision | Promise<RateDecision> {
    const minute = Math.floor(now / MINUTE_MS);
    const w = this.#window(keyId, minute, limit);
    return w.spent < w.claimed || w.exhausted
      ? decide(w, limit, minute)
      : this.#admitAfterClaims(keyId, w, limit, minute);
  }

  /**
   * Takes back the slot spent by a request of `keyId` admitted at `now` under `limit` and then refused by a
   * later check, so that a refusal for something else costs no rate-limit slot. Only within the minute and
   * limit it was spent under: once either changed, that slot counts for nothing now.
   */
  giveBack(keyId: string, limit: number, now: number): void {
    const w = this.#windows.get(keyId);
    if (w && w.minute === Math.floor(now / MINUTE_MS) && w.limit === limit && w.spent > 0) w.spent--;
  }

  async #admitAfterClaims(keyId: string, w: KeyWindow, limit: number, minute: number): Promise<RateDecision> {
    while (w.spent >= w.claimed && !w.exhausted) {
      w.waiting++;
      try {
        await (w.claim ??= this.#claim(keyId, w).finally(() => w.claim = undefined));
      } finally {
        w.waiting--;
      }
    }
    return decide(w, limit, minute);
  }

  #window(keyId: string, minute: number, limit: number): KeyWindow {
    let w = this.#windows.get(keyId);
    if (!w || w.minute < minute) {
      if (this.#windows.size > 10_000) this.#sweep(minute);
      // A minute's counter starts absent: the first claim of it can go without reading it.
      w = {
        minute,
        limit,
        claimed: 0,
        spent: 0,
        counter: 0,
        exhausted: false,
        versionstamp: null,
        shared: false,
        waiting: 0,
      };
      this.#windows.set(keyId, w);
    } else if (w.limit !== limit) {
      // Slots claimed under another limit are dropped so a lowered limit binds now, not next minute.
      w.claimed = w.spent;
      w.exhausted = false;
      w.limit = limit;
    }
    return w;
  }

  /** Forgets keys whose minute is over, so a gateway seeing many keys keeps bounded memory. */
  #sweep(minute: number): void {
    for (const [keyId, w] of this.#windows) {
      if (w.minute < minute && !w.claim) this.#windows.delete(keyId);
    }
  }

  /** A claim given up on that lands after all: its slots are this process's, within the minute they are of. */
  #landLate(
    keyId: string,
    w: KeyWindow,
    sent: { grant: number; counter: number; commit: Promise<Deno.KvCommitResult | Deno.KvCommitError> },
  ): void {
    sent.commit.then((result) => {
      if (!result.ok || this.#windows.get(keyId) !== w) return;
      w.claimed += sent.grant;
      w.counter = Math.max(w.counter, sent.counter + sent.grant);
    }, () => {});
  }

  async #claim(keyId: string, w: KeyWindow): Promise<void> {
    const key = rateCounterKey(keyId, w.minute);
    const headroom = Math.min(Math.floor(w.limit * HEADROOM_FRACTION), MAX_HEADROOM);
    const link = this.link;
    let sent:
      | { grant: number; counter: number; commit: Promise<Deno.KvCommitResult | Deno.KvCommitError> }
      | undefined;
    try {
      for (let attempt = 0; attempt < MAX_CLAIM_ATTEMPTS; attempt++) {
        const guessed = w.versionstamp !== undefined && !w.shared;
        if (!guessed) {
          const entry = await link.attempt(() => this.kv.get<Deno.KvU64>(key));
          w.counter = Number(entry.value?.value ?? 0n);
          w.versionstamp = entry.versionstamp;
        }
        const counter = w.counter;
        const versionstamp = w.versionstamp!;
        const want = Math.max(1, w.waiting - (w.claimed - w.spent)) + headroom;
        // A counter known from this process's own write is at least that: it only grows within its minute.
        const grant = Math.min(want, w.limit - counter);
        if (grant <= 0) {
          w.exhausted = true;
          return;
        }
        const op = this.kv.atomic()
          .check({ key, versionstamp })
          .set(key, new Deno.KvU64(BigInt(counter + grant)), { expireIn: COUNTER_TTL_MS });
        const result = await link.attempt(() => (sent = { grant, counter, commit: op.commit() }).commit);
        sent = undefined;
        if (result.ok) {
          w.claimed += grant;
          w.counter = counter + grant;
          w.versionstamp = result.versionstamp;
          return;
        }
        // Someone else wrote the counter since: it is read again, and before every claim of this minute.
        if (guessed) w.shared = true;
        w.versionstamp = undefined;
      }
    } catch (error) {
      // Whether a commit that failed so landed is not known: the counter is read before the next claim.
      w.versionstamp = undefined;
      if (sent) this.#landLate(keyId, w, sent);
      // The store's link says once that the store is down; each refused claim need not.
      if (!(error instanceof StoreUnreachable)) console.error("gateway: rate limit: store failure:", error);
      throw new StoreUnavailable("rate limit", error);
    }
    throw new StoreUnavailable("rate limit", new Error("the counter kept changing"));
  }
}

/** Spends a slot of the window if it has one left. */
function decide(w: KeyWindow, limit: number, minute: number): RateDecision {
  const admitted = w.spent < w.claimed;
  if (admitted) w.spent++;
  const unspent = w.claimed - w.spent;
  return {
    admitted,
    limit,
    remaining: Math.max(0, limit - w.counter + unspent),
    resetAt: (minute + 1) * MINUTE_MS,
  };
}
