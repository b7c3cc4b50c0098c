/**
 * @module Reading the ledger back, oldest first: the order rows are stored in (and records within a row),
 * so a listing with `since` is one range scan from that instant forward and needs no sorting. Newest first is
 * the same scan run backwards.
 */
import { encodeTime, TIME_MAX } from "ulid";
import type { UsageRecord } from "./types.ts";
import {
  type IndexRow,
  isPlaces,
  type LedgerRow,
  rowRecords,
  USAGE_BY_KEY_PREFIX,
  USAGE_PREFIX,
  usageKey,
} from "./kv_layout.ts";
import { decodeRecord, isBatchRow } from "./row_codec.ts";

export interface UsageFilter {
  keyId?: string;
  user?: string;
  /** Only records whose `time` is at or after this instant. */
  since?: Date;
  /** At most this many records (default 1000). */
  limit?: number;
  /** Newest first (the reverse of the recording order), so `limit` keeps the latest records. */
  newestFirst?: boolean;
}

export const DEFAULT_LIST_LIMIT = 1000;

/** Rows fetched per round trip; `getMany` takes at most 10 keys. */
const ROWS_PER_READ = 10;

/** The smallest row id a record of `since` or later can have; shorter strings sort before longer ones. */
function lowerBound(since: Date): string {
  return encodeTime(Math.min(Math.max(since.getTime(), 0), TIME_MAX));
}

function selector(prefix: Deno.KvKey, since: Date | undefined): Deno.KvListSelector {
  return since ? { prefix, start: [...prefix, lowerBound(since)] } : { prefix };
}

/** The items of one row in the listing's order. */
function ordered<T>(items: Iterable<T>, newestFirst: boolean): Iterable<T> {
  return newestFirst ? [...items].reverse() : items;
}

/** The ledger's records in order: every batch row from `since` on. */
async function* allRecords(
  kv: Deno.Kv,
  since: Date | undefined,
  reverse: boolean,
): AsyncGenerator<UsageRecord> {
  // A row holds up to 250 records (one in a store from before batching).
  for await (const entry of kv.list<LedgerRow>(selector([USAGE_PREFIX], since), { batchSize: 20, reverse })) {
    yield* ordered(rowRecords(entry.value), reverse);
  }
}

/** One key's records in order: its index rows name the places of its records in the batch rows. */
async function* keyRecords(
  kv: Deno.Kv,
  keyId: string,
  since: Date | undefined,
  reverse: boolean,
): AsyncGenerator<UsageRecord> {
  const index = kv.list<IndexRow>(selector([USAGE_BY_KEY_PREFIX, keyId], since), { batchSize: 100, reverse });
  let pending: Deno.KvEntry<IndexRow>[] = [];
  const resolve = async function* () {
    const places = pending.filter((e) => isPlaces(e.value));
    const batches = places.length
      ? await kv.getMany<LedgerRow[]>(places.map((e) => usageKey(String(e.key[2]))))
      : [];
    for (const entry of pending) {
      if (!isPlaces(entry.value)) {
        yield entry.value;
        continue;
      }
      const row = batches[places.indexOf(entry)].value;
      // A batch row and its index rows are written in one commit; a missing one would be a damaged store.
      if (row === null) continue;
      // Only the records this key's index row names are decoded, not the whole batch.
      if (isBatchRow(row)) {
        for (const place of ordered(entry.value, reverse)) yield decodeRecord(row, place);
      } else yield* ordered(rowRecords(row), reverse);
    }
    pending = [];
  };
  for await (const entry of index) {
    pending.push(entry);
    if (pending.length >= ROWS_PER_READ) yield* resolve();
  }
  yield* resolve();
}

/**
 * Records matching `filter`, oldest first unless `newestFirst` (by row id, then place in the row: the order the ledger recorded
 * them in, which is their time's order except for a record queued after a newer one). A key filter scans
 * that key's index; a user filter alone scans the whole ledger.
 */
export async function listUsage(kv: Deno.Kv, filter: UsageFilter = {}): Promise<UsageRecord[]> {
  const limit = filter.limit ?? DEFAULT_LIST_LIMIT;
  if (!Number.isSafeInteger(limit) || limit < 1) {
    throw new RangeError(`Cannot list usage: limit must be a positive integer, got ${limit}`);
  }
  const since = filter.since;
  const sinceMs = since?.getTime() ?? -Infinity;
  if (Number.isNaN(sinceMs)) throw new RangeError("Cannot list usage: since is an invalid date");
  const reverse = filter.newestFirst === true;
  const source = filter.keyId === undefined
    ? allRecords(kv, since, reverse)
    : keyRecords(kv, filter.keyId, since, reverse);
  const out: UsageRecord[] = [];
  for await (const rec of source) {
    // Row ids never precede their records' times, but a row may hold records from before `since`
    // (one queued late, or a batch spanning it): the range narrows the scan, this test decides.
    if (Date.parse(rec.time) < sinceMs) continue;
    if (filter.user !== undefined && rec.user !== filter.user) continue;
    out.push(rec);
    if (out.length >= limit) break;
  }
  return out;
}
