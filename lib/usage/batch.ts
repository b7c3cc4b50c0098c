/**
 * @module Turning queued usage records into group commits. A record's rows and counter increments always
 * travel in one commit, and a commit stays well inside Deno KV's per-operation limits (100 checks, 1000
 * mutations, 80 KiB of keys, 800 KiB of mutations), so it can never be refused for its size.
 */
import type { UsageRecord } from "./types.ts";
import { PERIOD_NAMES, periodKeys } from "./periods.ts";
import { COUNTER_TTL_MS, counterId, tokenCounterKey, usageByKeyKey, usageKey } from "./kv_layout.ts";
import { isKeylessRefusal, KEYLESS_ROW_TTL_MS } from "./keyless_budget.ts";

/** One counter increment; `expireIn` is renewed with every write. */
export interface CounterDelta {
  key: Deno.KvKey;
  /** `counterId(key)`, made once. */
  id: string;
  delta: bigint;
  expireIn: number;
  /** Bytes its key costs a commit: it is both checked and written. */
  keyBytes: number;
}

/** A record as queued: its row id, its rows and the counters it adds to. */
export interface PendingRecord {
  id: string;
  rec: UsageRecord;
  rows: Deno.KvKey[];
  /** Set for rows that are not kept for good (key-less refusals). */
  expireIn?: number;
  counters: CounterDelta[];
  /** Bytes of the row keys; counters carry their own, counted once per batch. */
  rowBytes: number;
  valueBytes: number;
}

/** Half of each KV limit: a margin for encoding overhead our estimates do not see. */
const LIMITS = {
  /** One check guards the batch; each counter needs one, and KV allows 100 per operation. */
  counters: 90,
  mutations: 500,
  keyBytes: 40_000,
  valueBytes: 400_000,
};

export const MAX_BATCH_RECORDS = 100;

function utf8Length(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    n += c < 0x80 ? 1 : c < 0x800 ? 2 : 3;
  }
  return n;
}

function keyBytes(key: Deno.KvKey): number {
  // Each string part is a tag byte, its UTF-8 bytes and a terminator.
  return key.reduce<number>((sum, part) => sum + utf8Length(String(part)) + 2, 0);
}

/** The latest instant a row id can encode is far later; this one still prints as a normal ISO date. */
const LAST_TIME = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/**
 * A copy of `rec` fit to store, and what had to be repaired to make it so. The request happened and its
 * tokens were spent: a malformed record is mended and kept rather than refused, since refusing would
 * lose it. The copy also keeps a caller that reuses its object from changing a row already counted.
 */
export function repair(rec: UsageRecord, nowMs: number): { rec: UsageRecord; problems: string[] } {
  const fit = { ...rec };
  const problems: string[] = [];
  const ms = Date.parse(rec.time);
  if (!(ms > 0 && ms <= LAST_TIME)) {
    fit.time = new Date(nowMs).toISOString();
    problems.push(`time ${JSON.stringify(rec.time)} is not an ISO 8601 instant, used ${fit.time}`);
  }
  for (const field of ["promptTokens", "completionTokens"] as const) {
    const n = rec[field];
    if (Number.isSafeInteger(n) && n >= 0) continue;
    const value = Number(n);
    fit[field] = value > 0 ? Math.min(Math.round(value), Number.MAX_SAFE_INTEGER) : 0;
    problems.push(`${field} ${n} is not a non-negative integer, counted as ${fit[field]}`);
  }
  return { rec: fit, problems };
}

/** Prepares one record that `repair` has passed; `rowId` makes its time-ordered row id. */
export function prepare(rec: UsageRecord, rowId: (timeMs: number) => string): PendingRecord {
  const time = new Date(rec.time);
  const tokens = BigInt(rec.promptTokens + rec.completionTokens);
  const id = rowId(time.getTime());
  const rows = [usageKey(id)];
  if (rec.keyId !== undefined) rows.push(usageByKeyKey(rec.keyId, id));
  const counters: CounterDelta[] = [];
  if (tokens > 0n) {
    const labels = periodKeys(time);
    const owners = [["key", rec.keyId], ["user", rec.user]] as const;
    for (const [scope, owner] of owners) {
      if (owner === undefined) continue;
      for (const name of PERIOD_NAMES) {
        const key = tokenCounterKey(scope, owner, labels[name]);
        counters.push({
          key,
          id: counterId(key),
          delta: tokens,
          expireIn: COUNTER_TTL_MS[name],
          keyBytes: 2 * keyBytes(key),
        });
      }
    }
  }
  // Rows are stored twice at most; a V8-serialized string takes at most two bytes per UTF-16 unit.
  const valueBytes = JSON.stringify(rec).length * 2 * rows.length + counters.length * 16;
  const rowBytes = rows.reduce((sum, key) => sum + keyBytes(key), 0);
  const pending: PendingRecord = { id, rec, rows, counters, rowBytes, valueBytes };
  if (isKeylessRefusal(rec)) pending.expireIn = KEYLESS_ROW_TTL_MS;
  return pending;
}

/** The longest prefix of `queue` (at least one record, at most `maxRecords`) that fits in one commit. */
export function takeBatch(queue: readonly PendingRecord[], maxRecords: number): PendingRecord[] {
  const counters = new Set<string>();
  let mutations = 0, bytes = 0, values = 0, n = 0;
  for (; n < Math.min(queue.length, maxRecords); n++) {
    const next = queue[n];
    const fresh = new Map<string, number>();
    for (const c of next.counters) {
      if (!counters.has(c.id)) fresh.set(c.id, c.keyBytes);
    }
    const freshBytes = [...fresh.values()].reduce((sum, b) => sum + b, 0);
    const fits = counters.size + fresh.size <= LIMITS.counters &&
      mutations + next.rows.length + fresh.size <= LIMITS.mutations &&
      bytes + next.rowBytes + freshBytes <= LIMITS.keyBytes && values + next.valueBytes <= LIMITS.valueBytes;
    if (!fits && n > 0) break;
    for (const id of fresh.keys()) counters.add(id);
    mutations += next.rows.length + fresh.size;
    bytes += next.rowBytes + freshBytes;
    values += next.valueBytes;
  }
  return queue.slice(0, Math.max(n, 1));
}

/** The batch's increments, one per counter however many records touch it. */
export function mergeCounters(batch: readonly PendingRecord[]): CounterDelta[] {
  const merged = new Map<string, CounterDelta>();
  for (const { counters } of batch) {
    for (const c of counters) {
      const seen = merged.get(c.id);
      if (seen) seen.delta += c.delta;
      else merged.set(c.id, { ...c });
    }
  }
  return [...merged.values()];
}
