/**
 * @module Reading the ledger back, oldest first: the order rows are stored in, so a listing with `since`
 * is one range scan from that instant forward and needs no sorting.
 */
import { encodeTime, TIME_MAX } from "ulid";
import type { UsageRecord } from "./types.ts";
import { USAGE_BY_KEY_PREFIX, USAGE_PREFIX } from "./kv_layout.ts";

export interface UsageFilter {
  keyId?: string;
  user?: string;
  /** Only records whose `time` is at or after this instant. */
  since?: Date;
  /** At most this many records (default 1000). */
  limit?: number;
}

export const DEFAULT_LIST_LIMIT = 1000;

/** The smallest row id a record of `since` or later can have; shorter strings sort before longer ones. */
function lowerBound(since: Date): string {
  const ms = since.getTime();
  if (Number.isNaN(ms)) throw new RangeError("Cannot list usage: since is an invalid date");
  return encodeTime(Math.min(Math.max(ms, 0), TIME_MAX));
}

/**
 * Records matching `filter`, oldest first (by row id: the record's time, or slightly later when the
 * ledger queued it after a newer one). A key filter scans that key's index; a user filter alone scans
 * the whole ledger.
 */
export async function listUsage(kv: Deno.Kv, filter: UsageFilter = {}): Promise<UsageRecord[]> {
  const limit = filter.limit ?? DEFAULT_LIST_LIMIT;
  if (!Number.isSafeInteger(limit) || limit < 1) {
    throw new RangeError(`Cannot list usage: limit must be a positive integer, got ${limit}`);
  }
  const prefix: Deno.KvKey = filter.keyId === undefined
    ? [USAGE_PREFIX]
    : [USAGE_BY_KEY_PREFIX, filter.keyId];
  const selector = filter.since ? { prefix, start: [...prefix, lowerBound(filter.since)] } : { prefix };
  const sinceMs = filter.since?.getTime() ?? -Infinity;
  const out: UsageRecord[] = [];
  for await (const entry of kv.list<UsageRecord>(selector, { batchSize: Math.min(limit, 500) })) {
    const rec = entry.value;
    // Row ids never precede their record's time, but one queued late may sort after `since` without
    // its time doing so: the range narrows the scan, this test decides.
    if (Date.parse(rec.time) < sinceMs) continue;
    if (filter.user !== undefined && rec.user !== filter.user) continue;
    out.push(rec);
    if (out.length >= limit) break;
  }
  return out;
}
