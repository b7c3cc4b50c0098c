/**
 * @module Use against quota, for the admin page: for a key or a user with token caps, the tokens counted in
 * the current day, week and month beside each cap. Read from the same token counters the policy checks
 * (`readTotals`), so a bar at 100 % is a key the gateway refuses; an owner without caps costs no read.
 */
import type { TokenQuotas } from "../store/records.ts";
import { PERIOD_NAMES, periodEnds, type PeriodName, readTotals, type TotalsScope } from "../usage/mod.ts";

const CAP_FIELD: Record<PeriodName, keyof TokenQuotas> = {
  day: "dailyTokens",
  week: "weeklyTokens",
  month: "monthlyTokens",
};

export interface QuotaBar {
  period: PeriodName;
  used: number;
  cap: number;
  /** When the period ends and its count starts over, ISO 8601. */
  resets: string;
}

/** The owner's capped periods with their use; empty (and no store read) when it caps nothing. */
export async function quotaUse(
  kv: Deno.Kv,
  scope: TotalsScope,
  id: string,
  quotas: TokenQuotas,
  now: Date,
): Promise<QuotaBar[]> {
  const capped = PERIOD_NAMES.filter((period) => quotas[CAP_FIELD[period]] !== undefined);
  if (capped.length === 0) return [];
  const totals = await readTotals(kv, scope, id, now);
  const ends = periodEnds(now);
  return capped.map((period) => ({
    period,
    used: totals[period],
    cap: quotas[CAP_FIELD[period]]!,
    resets: ends[period],
  }));
}

/** Use of several owners at once, by id; the reads run in parallel. */
export async function quotaUses<T extends TokenQuotas>(
  kv: Deno.Kv,
  scope: TotalsScope,
  owners: { id: string; quotas: T }[],
  now: Date,
): Promise<Map<string, QuotaBar[]>> {
  const bars = await Promise.all(owners.map((o) => quotaUse(kv, scope, o.id, o.quotas, now)));
  return new Map(owners.map((o, i) => [o.id, bars[i]]));
}
