/**
 * @module Where usage lives in KV: the ledger rows, the per-key index of them and the token counters. The
 * ledger writes these keys and the policy and admin read them, so the layout is spelled out once, here.
 *
 * `["usage", id]` holds the records of one group commit, in the order they were recorded (encoded as
 * `row_codec.ts` says), and
 * `["usage_by_key", keyId, id]` the places of that key's records in it (bytes, ascending): the index stays
 * a range scan per key while a commit writes each record once. The id is a ULID whose time is at or after
 * every record's time in the row, so a scan from an instant's id finds every record from that instant on.
 *
 * Stores written before batching hold one record per row, as a plain object, in both places; both shapes
 * are read.
 */
import type { UsageRecord } from "./types.ts";
import { type BatchRow, decodeRow, isBatchRow } from "./row_codec.ts";
import { PERIOD_NAMES, periodKeys, type PeriodName } from "./periods.ts";

export const USAGE_PREFIX = "usage";
export const USAGE_BY_KEY_PREFIX = "usage_by_key";
export const TOKENS_PREFIX = "tokens";
export const USAGE_MARK_PREFIX = "usage_mark";

export type TotalsScope = "key" | "user";

export type Totals = Record<PeriodName, number>;

const DAY_MS = 86_400_000;

/**
 * How long a counter outlives its last write. Generous, so a counter is still there when its period is
 * read for the last time (a late record, a "resets at" message), yet old periods do not pile up forever.
 */
export const COUNTER_TTL_MS: Record<PeriodName, number> = {
  day: 3 * DAY_MS,
  week: 15 * DAY_MS,
  month: 70 * DAY_MS,
};

/** A ledger row's value: a batch of records, or one record in a store written before batching. */
export type LedgerRow = BatchRow | UsageRecord;

/** The records of a row, in their recorded order. */
export function rowRecords(value: LedgerRow): readonly UsageRecord[] {
  return isBatchRow(value) ? decodeRow(value) : [value];
}

/**
 * A per-key index row's value: places in the batch row of the same id (a byte each, or two once a batch holds
 * more than 256 records), or one record before batching.
 */
export type IndexRow = Uint8Array | Uint16Array | UsageRecord;

/** Whether an index row holds places (rather than a record, as before batching). */
export const isPlaces = (value: IndexRow): value is Uint8Array | Uint16Array =>
  value instanceof Uint8Array || value instanceof Uint16Array;

export function usageKey(id: string): Deno.KvKey {
  return [USAGE_PREFIX, id];
}

export function usageByKeyKey(keyId: string, id: string): Deno.KvKey {
  return [USAGE_BY_KEY_PREFIX, keyId, id];
}

/**
 * `["usage_mark", ledgerId]`: how many of one ledger's records the token counters hold, written in each of its
 * commits, so a snapshot that reads it knows exactly which of that ledger's records it counts.
 */
export function usageMarkKey(ledgerId: string): Deno.KvKey {
  return [USAGE_MARK_PREFIX, ledgerId];
}

/**
 * A counter key as one string, for maps. Counter keys are all strings, so joining on a character no key part
 * contains is unambiguous, and cheaper than `JSON.stringify`.
 */
export const counterId = (key: Deno.KvKey): string => key.join("\u0000");

/** `period` is a label from `periodKeys`, e.g. `d:2026-11-22`. */
export function tokenCounterKey(scope: TotalsScope, id: string, period: string): Deno.KvKey {
  return [TOKENS_PREFIX, scope, id, period];
}

/** The counters of the periods containing `now`, in `PERIOD_NAMES` order. */
export function totalsKeys(scope: TotalsScope, id: string, now: Date): Deno.KvKey[] {
  const labels = periodKeys(now);
  return PERIOD_NAMES.map((name) => tokenCounterKey(scope, id, labels[name]));
}

/** Reads any number of counters; `getMany` takes at most 10 keys, so larger sets go in parallel chunks. */
export async function readCounters(
  kv: Deno.Kv,
  keys: readonly Deno.KvKey[],
): Promise<Deno.KvEntryMaybe<Deno.KvU64>[]> {
  const chunks: Deno.KvKey[][] = [];
  for (let i = 0; i < keys.length; i += 10) chunks.push(keys.slice(i, i + 10));
  return (await Promise.all(chunks.map((chunk) => kv.getMany<Deno.KvU64[]>(chunk)))).flat();
}

/** Tokens counted so far in the current day, week and month (UTC) for one key or user. */
export async function readTotals(kv: Deno.Kv, scope: TotalsScope, id: string, now: Date): Promise<Totals> {
  const entries = await readCounters(kv, totalsKeys(scope, id, now));
  const [day, week, month] = entries.map((entry) => Number(entry.value?.value ?? 0n));
  return { day, week, month };
}
