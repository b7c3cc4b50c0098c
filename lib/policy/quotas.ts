/**
 * @module The limits a key's requests meet: daily, weekly and monthly token caps over UTC calendar periods,
 * and requests in progress at once, each for the key and for its owning user. Made once per key record, user
 * record and day, since records are replaced, never changed, when an admin edits them.
 *
 * Holding them under concurrency is the reservations' work (`reservations.ts`). Here is the one check that
 * needs no store: a cap whose settled total this process already knows to have reached it (its own ledger's
 * commits tell it, `LiveTotals`) refuses at once, before the body is read and before the rate limit, so the
 * refusal spends no rate-limit slot. A settled total only grows within its period, so what is known of it is
 * never too high.
 */
import { QuotaExceeded } from "../errors.ts";
import type { KeyRecord, OwnerLimits, UserRecord } from "../store/records.ts";
import {
  labelsOf,
  PERIOD_NAMES,
  periodEnds,
  type PeriodKeys,
  type PeriodName,
  tokenCounterKey,
  type TotalsScope,
} from "../usage/mod.ts";
import type { LiveTotals } from "../usage/live_totals.ts";
import { holdingsKey } from "./holdings.ts";

const CAP_FIELD = {
  day: "dailyTokens",
  week: "weeklyTokens",
  month: "monthlyTokens",
} as const satisfies Record<PeriodName, keyof OwnerLimits>;
const PERIOD_WORD: Record<PeriodName, string> = { day: "Daily", week: "Weekly", month: "Monthly" };

export interface Cap {
  period: PeriodName;
  cap: number;
  counter: Deno.KvKey;
  /** The owner as a refusal names it: `this API key`, `user "ana"`. */
  owner: string;
}

/** What one owner (the key, or its user) limits. */
export interface OwnerLimit {
  scope: TotalsScope;
  id: string;
  /** Where every process's holdings of this owner are. */
  holdings: Deno.KvKey;
  /** The owner as a refusal begins with it: `This API key`, `User "ana"`. */
  title: string;
  caps: Cap[];
  /** The caps' periods and sizes as text: an allowance sized for other caps is sized again first. */
  terms: string;
  maxConcurrent?: number;
}

export interface KeyLimits {
  /** The period labels of the day the limits were made on. */
  labels: PeriodKeys;
  user: UserRecord | undefined;
  /** The owners with any limit; none for a key that may do anything any time. */
  owners: OwnerLimit[];
  caps: Cap[];
  counters: Deno.KvKey[];
  /** Requests with the same signature meet the same owners on the same day: one store read decides them. */
  signature: string;
}

const limitsMemo = new WeakMap<KeyRecord, KeyLimits>();

export function limitsOf(key: KeyRecord, user: UserRecord | undefined, now: number): KeyLimits {
  // One object per day, so its identity tells whether the memo is of today.
  const labels = labelsOf(now);
  const known = limitsMemo.get(key);
  if (known?.labels === labels && known.user === user) return known;
  const owners: OwnerLimit[] = [];
  const add = (limits: OwnerLimits, scope: TotalsScope, id: string, owner: string, title: string) => {
    const caps: Cap[] = [];
    for (const period of PERIOD_NAMES) {
      const cap = limits[CAP_FIELD[period]];
      if (cap !== undefined) {
        caps.push({ period, cap, counter: tokenCounterKey(scope, id, labels[period]), owner });
      }
    }
    if (caps.length === 0 && limits.maxConcurrent === undefined) return;
    owners.push({
      scope,
      id,
      holdings: holdingsKey(scope, id),
      title,
      caps,
      terms: caps.map((c) => `${c.period}:${c.cap}`).join(","),
      maxConcurrent: limits.maxConcurrent,
    });
  };
  add(key, "key", key.id, "this API key", "This API key");
  if (user) add(user, "user", user.name, `user "${user.name}"`, `User "${user.name}"`);
  const caps = owners.flatMap((o) => o.caps);
  const made: KeyLimits = {
    labels,
    user,
    owners,
    caps,
    counters: caps.map((c) => c.counter),
    signature: `${owners.map((o) => `${o.scope}:${o.id}`).join("\u0000")}\u0000${labels.day}`,
  };
  limitsMemo.set(key, made);
  return made;
}

/** When a cap's period ends, ms since the epoch, and the ISO text a refusal shows. */
export function resetOf(cap: Cap, now: number): { at: number; text: string } {
  const text = periodEnds(new Date(now))[cap.period];
  return { at: Date.parse(text), text };
}

/** Of several caps, the one whose period ends last: waiting for an earlier one would not help. */
export function liftsLast<T extends { cap: Cap }>(rows: T[], now: number): T {
  return rows.reduce((a, b) => resetOf(b.cap, now).at > resetOf(a.cap, now).at ? b : a);
}

/** The refusal of a cap whose settled total reached it. */
export function usedUp(cap: Cap, used: number, now: number): QuotaExceeded {
  const reset = resetOf(cap, now);
  return new QuotaExceeded(
    `${PERIOD_WORD[cap.period]} token quota of ${cap.owner} is used up (${used} of ${cap.cap} tokens); ` +
      `it resets at ${reset.text}`,
    reset.at,
    now,
  );
}

/**
 * The refusal of a cap with too little left for a request's prompt once the requests in progress are counted.
 * When those hold part of it, it may be back as soon as one ends, so that is when to try again.
 */
export function tooLittleLeft(
  cap: Cap,
  left: number,
  inProgress: number,
  prompt: number,
  now: number,
): QuotaExceeded {
  const reset = resetOf(cap, now);
  const held = inProgress > 0 ? ` (requests in progress hold ${inProgress})` : "";
  const sooner = inProgress > 0 ? "; requests in progress may leave room as they end, try again in 1 s" : "";
  return new QuotaExceeded(
    `${PERIOD_WORD[cap.period]} token quota of ${cap.owner} has ${Math.max(0, left)} of ${cap.cap} tokens ` +
      `left${held}, too few for this request, whose prompt alone is about ${prompt} tokens; ` +
      `it resets at ${reset.text}${sooner}`,
    inProgress > 0 ? now + 1000 : reset.at,
    now,
    inProgress === 0,
  );
}

export class QuotaCheck {
  constructor(private readonly totals: LiveTotals) {}

  /** Throws `QuotaExceeded` when a cap of the key or of its user is known to be reached at `now`. */
  enforce(key: KeyRecord, user: UserRecord | undefined, now: number): void {
    const { caps, counters } = limitsOf(key, user, now);
    if (caps.length === 0) return;
    const seen = this.totals.peek(counters);
    const reached = caps.map((cap, i) => ({ cap, used: seen[i].tokens })).filter((r) => r.used >= r.cap.cap);
    if (reached.length === 0) return;
    const binding = liftsLast(reached, now);
    throw usedUp(binding.cap, binding.used, now);
  }
}
