/**
 * @module The usage stage: the ledger that accounts every request (rows plus day/week/month token counters
 * per key and user, written together) and the reads the policy and admin need. It knows nothing of faces,
 * backends or HTTP: callers hand it finished `UsageRecord`s.
 */
export type { TokenSource, UsageRecord, UsageStatus } from "./types.ts";
export { type LedgerProgress, UsageLedger } from "./ledger.ts";
export type { UsageLedgerOptions } from "./ledger_options.ts";
export { readTotals, tokenCounterKey, type Totals, type TotalsScope } from "./kv_layout.ts";
export { labelsOf } from "./counter_sums.ts";
export { DEFAULT_LIST_LIMIT, listUsage, type UsageFilter } from "./history.ts";
export {
  PERIOD_NAMES,
  periodEnds,
  type PeriodKeys,
  periodKeys,
  type PeriodName,
  periodStarts,
} from "./periods.ts";
