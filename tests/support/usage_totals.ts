/**
 * @module What every usage report is made of: requests (a row's `count`, else one) and tokens per day, key,
 * user, model, server, format and outcome. Two ledgers that agree on these agree on every total a report makes.
 */
import type { UsageRecord } from "../../lib/usage/mod.ts";

/** `id → "requests/prompt tokens/completion tokens"`, one entry per day and group. */
export function usageTotals(records: Iterable<UsageRecord>): Map<string, string> {
  const sums = new Map<string, number[]>();
  for (const r of records) {
    const id = [r.time.slice(0, 10), r.keyId, r.user, r.model, r.server, r.format, r.status, r.errorCode]
      .join();
    const t = sums.get(id) ?? [0, 0, 0];
    t[0] += r.count ?? 1;
    t[1] += r.promptTokens;
    t[2] += r.completionTokens;
    sums.set(id, t);
  }
  return new Map([...sums].map(([id, t]) => [id, t.join("/")]));
}
