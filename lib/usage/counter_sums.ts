/**
 * @module The token counter increments of one batch, summed as its records arrive: per key and per user, per
 * UTC day of the records' times. A record costs two map lookups and two additions here; the counter keys
 * and their merged deltas are made once per batch, when it is sealed (`deltas`).
 *
 * The sums are also what the quota check adds to a counter's stored value while the batch is not written
 * (`pending`), so a record counts against its quotas from the moment it is queued.
 */
import { PERIOD_NAMES, type PeriodKeys, periodKeys, type PeriodName } from "./periods.ts";
import { COUNTER_TTL_MS, counterId, tokenCounterKey, type TotalsScope } from "./kv_layout.ts";

/** One counter increment; `expireIn` is renewed with every write. */
export interface CounterDelta {
  key: Deno.KvKey;
  /** `counterId(key)`, made once. */
  id: string;
  delta: bigint;
  expireIn: number;
}

const DAY_MS = 86_400_000;
const labelCache = new Map<number, PeriodKeys>();
let lastDay = NaN;
let lastLabels: PeriodKeys | undefined;

/**
 * The period labels of the UTC day containing `timeMs`, one shared object per day: records of a batch
 * nearly always fall on one day, so the labels are formatted once per day rather than once per record,
 * and the object's identity tells days apart.
 */
export function labelsOf(timeMs: number): PeriodKeys {
  const day = Math.floor(timeMs / DAY_MS);
  if (day === lastDay) return lastLabels!;
  let labels = labelCache.get(day);
  if (!labels) {
    // A handful of days are ever live at once (a late record, a midnight); the rest are history.
    if (labelCache.size >= 64) labelCache.clear();
    labels = periodKeys(new Date(day * DAY_MS));
    labelCache.set(day, labels);
  }
  lastDay = day;
  lastLabels = labels;
  return labels;
}

/** Tokens of one owner on one day; a batch rarely spans two days, so a list is enough. */
interface DaySum {
  labels: PeriodKeys;
  tokens: number;
  next: DaySum | undefined;
}

const PERIOD_OF: Record<string, PeriodName> = { d: "day", w: "week", m: "month" };

export class CounterSums {
  readonly #key = new Map<string, DaySum>();
  readonly #user = new Map<string, DaySum>();
  /** Distinct (owner, day) pairs: each makes at most three counters. */
  slots = 0;

  /** The sum of `owner` on the day of `labels`, if this batch has one yet. */
  find(scope: TotalsScope, owner: string, labels: PeriodKeys): DaySum | undefined {
    let sum = (scope === "key" ? this.#key : this.#user).get(owner);
    while (sum !== undefined && sum.labels !== labels) sum = sum.next;
    return sum;
  }

  /** Adds `tokens`; `found` is what `find` returned for the same arguments. */
  add(
    scope: TotalsScope,
    owner: string,
    labels: PeriodKeys,
    tokens: number,
    found: DaySum | undefined,
  ): void {
    if (found !== undefined) {
      found.tokens += tokens;
      return;
    }
    const owners = scope === "key" ? this.#key : this.#user;
    owners.set(owner, { labels, tokens, next: owners.get(owner) });
    this.slots++;
  }

  /** Tokens summed here for the counter `["tokens", scope, owner, label]`. */
  pending(scope: TotalsScope, owner: string, label: string): number {
    const period = PERIOD_OF[label[0]];
    let tokens = 0;
    for (let sum = (scope === "key" ? this.#key : this.#user).get(owner); sum; sum = sum.next) {
      if (sum.labels[period] === label) tokens += sum.tokens;
    }
    return tokens;
  }

  /** One increment per counter; days of one week or month merge into its counter. */
  deltas(): CounterDelta[] {
    const merged = new Map<string, CounterDelta>();
    for (const [scope, owners] of [["key", this.#key], ["user", this.#user]] as const) {
      for (const [owner, first] of owners) {
        for (let sum: DaySum | undefined = first; sum; sum = sum.next) {
          for (const name of PERIOD_NAMES) {
            const key = tokenCounterKey(scope, owner, sum.labels[name]);
            const id = counterId(key);
            const seen = merged.get(id);
            if (seen) seen.delta += BigInt(sum.tokens);
            else merged.set(id, { key, id, delta: BigInt(sum.tokens), expireIn: COUNTER_TTL_MS[name] });
          }
        }
      }
    }
    return [...merged.values()];
  }
}
