/**
 * @module Token quotas: daily, weekly and monthly caps per key and per owning user, over UTC calendar periods.
 * A request is refused once a cap is reached; the tokens of a request are known only when it ends, so the
 * request that crosses a cap is served and the next one is refused.
 *
 * Totals come from `LiveTotals` (exact for this process at every instant). When they are read from the
 * store: always before the first check of a counter; on every check once a total is within 10% of its cap,
 * so near the edge other processes' tokens are seen as soon as their ledger wrote them; otherwise in the
 * background when the value is older than `refreshMs`, so a request far from its caps never waits on the
 * store.
 */
import { QuotaExceeded, StoreUnavailable } from "../errors.ts";
import type { KeyRecord, TokenQuotas, UserRecord } from "../store/records.ts";
import {
  labelsOf,
  PERIOD_NAMES,
  periodEnds,
  type PeriodKeys,
  type PeriodName,
  tokenCounterKey,
} from "../usage/mod.ts";
import type { LiveTotals, Total } from "../usage/live_totals.ts";

const CAP_FIELD = {
  day: "dailyTokens",
  week: "weeklyTokens",
  month: "monthlyTokens",
} as const satisfies Record<
  PeriodName,
  keyof TokenQuotas
>;
const PERIOD_WORD: Record<PeriodName, string> = { day: "Daily", week: "Weekly", month: "Monthly" };
const NEAR_CAP = 0.1;

interface Cap {
  period: PeriodName;
  cap: number;
  counter: Deno.KvKey;
  owner: string;
}

export class QuotaCheck {
  readonly #refreshing = new Set<Promise<void>>();

  constructor(private readonly totals: LiveTotals, private readonly refreshMs = 250) {}

  /**
   * Throws `QuotaExceeded` when a cap of the key or of its user is already reached at `now`. Decided at once
   * from the totals held; a promise only when one must be read from the store first.
   */
  enforce(key: KeyRecord, user: UserRecord | undefined, now: number): void | Promise<void> {
    const { caps, counters } = capsOf(key, user, now);
    if (caps.length === 0) return;
    const seen = this.totals.peek(counters);
    const urgent = caps.filter((c, i) => mustRead(c, seen[i]));
    if (urgent.length) return this.#enforceAfterRead(caps, counters, seen, urgent, now);
    const stale = caps.filter((_, i) => seen[i].ageMs > this.refreshMs);
    if (stale.length) this.#refresh(stale.map((c) => c.counter));
    check(caps, seen, now);
  }

  async #enforceAfterRead(caps: Cap[], counters: Deno.KvKey[], seen: Total[], urgent: Cap[], now: number) {
    try {
      await this.totals.read(urgent.map((c) => c.counter));
    } catch (error) {
      // A value known earlier still bounds the total from below; with none there is nothing to check.
      if (seen.some((t) => t.ageMs === Infinity)) {
        console.error("gateway: token quotas: store failure:", error);
        throw new StoreUnavailable("token quotas", error);
      }
    }
    check(caps, this.totals.peek(counters), now);
  }

  #refresh(counters: Deno.KvKey[]): void {
    const done = this.totals.read(counters).catch(() => {
      // The next check tries again; until then the last known totals stand.
    }).finally(() => this.#refreshing.delete(done));
    this.#refreshing.add(done);
  }

  /** Waits for background reads, so the store can be closed under them. */
  async close(): Promise<void> {
    await Promise.all(this.#refreshing);
  }
}

/** Throws `QuotaExceeded` for the cap that lifts last, when any is reached. */
function check(caps: Cap[], seen: Total[], now: number): void {
  const reached = caps.filter((c, i) => seen[i].tokens >= c.cap);
  if (reached.length === 0) return;
  // The cap that lifts last is the one that decides when the caller may come back.
  const ends = periodEnds(new Date(now));
  const binding = reached.reduce((a, b) => Date.parse(ends[b.period]) > Date.parse(ends[a.period]) ? b : a);
  const used = seen[caps.indexOf(binding)].tokens;
  const resetAt = ends[binding.period];
  throw new QuotaExceeded(
    `${
      PERIOD_WORD[binding.period]
    } token quota of ${binding.owner} is used up (${used} of ${binding.cap} tokens); ` +
      `it resets at ${resetAt}`,
    Date.parse(resetAt),
    now,
  );
}

function mustRead(cap: Cap, total: Total): boolean {
  return total.ageMs === Infinity || cap.cap - total.tokens <= cap.cap * NEAR_CAP;
}

interface KeyCaps {
  /** The period labels of the day the caps were made on. */
  labels: PeriodKeys;
  user: UserRecord | undefined;
  caps: Cap[];
  counters: Deno.KvKey[];
}

/**
 * The caps of a key, made once per key record, user record and day: records are replaced, never changed, when
 * an admin edits them, so a record seen again has the same caps.
 */
const capsMemo = new WeakMap<KeyRecord, KeyCaps>();

function capsOf(key: KeyRecord, user: UserRecord | undefined, now: number): KeyCaps {
  // One object per day, so its identity tells whether the memo is of today.
  const labels = labelsOf(now);
  const known = capsMemo.get(key);
  if (known?.labels === labels && known.user === user) return known;
  const caps: Cap[] = [];
  const add = (quotas: TokenQuotas, scope: "key" | "user", id: string, owner: string) => {
    for (const period of PERIOD_NAMES) {
      const cap = quotas[CAP_FIELD[period]];
      if (cap === undefined) continue;
      caps.push({ period, cap, counter: tokenCounterKey(scope, id, labels[period]), owner });
    }
  };
  add(key, "key", key.id, "this API key");
  if (user) add(user, "user", user.name, `user "${user.name}"`);
  const made = { labels, user, caps, counters: caps.map((c) => c.counter) };
  capsMemo.set(key, made);
  return made;
}
