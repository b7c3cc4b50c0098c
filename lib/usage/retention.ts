/**
 * @module Retention: ledger rows older than the kept age are rolled up into per-day records (`day_rollup.ts`)
 * and deleted, a few rows per step, off the request path, so the ledger stops growing without bound while
 * every report of requests and tokens keeps its totals.
 *
 * A day's rolled-up records live in the ledger's own layout, in rows whose ids are the day's first instant
 * tagged `ROLLUP` and numbered (`rollupId`), with their per-key index rows; every reader of the ledger reads
 * them as it reads any row. A step reads some old rows, merges their records into the last rolled-up row of
 * their day (and new ones after it as they fill), and in one commit writes those and deletes the old rows and
 * their index rows. The commit checks every row it read: a step that raced another gateway's (on a shared
 * store) fails and is tried again, so no record is ever rolled up twice or lost. Token counters are not
 * touched: the tokens were counted when the requests were recorded.
 */
import { encodeTime } from "ulid";
import { Batch } from "./batch.ts";
import { DAY_MS, dayOf, DayRollup } from "./day_rollup.ts";
import { type LedgerRow, rowRecords, USAGE_PREFIX, usageByKeyKey, usageKey } from "./kv_layout.ts";
import { RecordEncoder } from "./row_codec.ts";
import type { UsageRecord } from "./types.ts";

const ROLLUP_TAG = "ROLLUP";
const SEQ_DIGITS = 10;

/** The id of a day's `seq`-th rolled-up row: after the day's first instant, before any later instant's rows. */
export const rollupId = (dayMs: number, seq: number) =>
  encodeTime(dayMs) + ROLLUP_TAG + String(seq).padStart(SEQ_DIGITS, "0");

export const isRollupId = (id: string) => id.slice(10, 10 + ROLLUP_TAG.length) === ROLLUP_TAG;

export interface RetentionOptions {
  /** Rows whose records are all older than this many days are rolled up. */
  days: number;
  /**
   * Old rows read per step, at most (default 1, up to 250 records): a step's decoding and grouping runs on the
   * event loop that serves requests, so it is kept to a millisecond or two.
   */
  rowsPerStep?: number;
  /**
   * Pause between steps, at least (default 20 ms); a step that took long is followed by four times as long,
   * so a pass takes at most a fifth of the time of the process and of the store it shares with requests.
   */
  pauseMs?: number;
  now?: () => number;
  signal?: AbortSignal;
}

export interface RetentionReport {
  /** Ledger rows rolled up and deleted. */
  rows: number;
  /** Records in them (requests, folded refusals counting as one each). */
  records: number;
  steps: number;
  /** Steps tried again because the rows changed meanwhile. */
  retries: number;
}

/** Mutations a step's old rows may take (a row and its index rows each): the commit allows 1,000 in all. */
const SOURCE_MUTATIONS = 400;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A day's last rolled-up row as this pass last wrote it, so the next step need not read and decode it. */
interface DayTail {
  seq: number;
  records: UsageRecord[];
  /** Its versionstamp in the store; null while the row does not exist. */
  versionstamp: string | null;
}

/** An old ledger row, decoded once. */
interface OldRow {
  entry: Deno.KvEntry<LedgerRow>;
  records: readonly UsageRecord[];
}

/** Rolls up every row older than the kept age; returns what it did. */
export async function rollUpOldRows(kv: Deno.Kv, options: RetentionOptions): Promise<RetentionReport> {
  const now = options.now ?? Date.now;
  const cutoff = dayOf(now() - options.days * DAY_MS);
  const end = usageKey(encodeTime(cutoff));
  const report: RetentionReport = { rows: 0, records: 0, steps: 0, retries: 0 };
  let rowsPerStep = Math.max(1, options.rowsPerStep ?? 1);
  let start: Deno.KvKey = [USAGE_PREFIX, ""];
  const tails = new Map<number, DayTail>();
  while (!options.signal?.aborted) {
    const { rows, last } = await oldRows(kv, start, end, rowsPerStep);
    if (!rows.length) break;
    let landed: boolean;
    const stepStarted = performance.now();
    try {
      landed = await rollUpStep(kv, rows, tails);
    } catch (error) {
      tails.clear();
      // A commit past one of the store's limits: fewer rows per step.
      if (rowsPerStep === 1) throw error;
      rowsPerStep = Math.ceil(rowsPerStep / 2);
      continue;
    }
    if (landed) {
      report.rows += rows.length;
      report.records += rows.reduce((n, row) => n + row.records.length, 0);
      report.steps++;
      // The rows read are gone; rolled-up rows before `last` are passed over from here on.
      start = last;
    } else {
      // Another writer moved something: what this pass knows of the days' last rows may be old.
      tails.clear();
      report.retries++;
    }
    await sleep(Math.max(options.pauseMs ?? 20, 4 * (performance.now() - stepStarted)));
  }
  return report;
}

/** Up to `limit` old rows from `start` on, leaving rolled-up rows aside, within the mutation budget. */
async function oldRows(kv: Deno.Kv, start: Deno.KvKey, end: Deno.KvKey, limit: number) {
  const rows: OldRow[] = [];
  let last = start;
  let mutations = 0;
  for await (const entry of kv.list<LedgerRow>({ start, end }, { batchSize: 20 })) {
    if (isRollupId(String(entry.key[1]))) {
      last = entry.key;
      continue;
    }
    const records = rowRecords(entry.value);
    const cost = 1 + keysOf(records).size;
    if (rows.length >= limit || (rows.length > 0 && mutations + cost > SOURCE_MUTATIONS)) break;
    rows.push({ entry, records });
    mutations += cost;
    last = entry.key;
  }
  return { rows, last };
}

const keysOf = (records: readonly UsageRecord[]) => new Set(records.flatMap((r) => r.keyId ?? []));

/** One step: the rows' records merged into their days' last rolled-up rows, the rows deleted; one commit. */
async function rollUpStep(kv: Deno.Kv, rows: OldRow[], tails: Map<number, DayTail>): Promise<boolean> {
  const op = kv.atomic();
  const days = new Map<number, UsageRecord[]>();
  for (const { entry, records } of rows) {
    op.check(entry);
    const id = String(entry.key[1]);
    for (const keyId of keysOf(records)) op.delete(usageByKeyKey(keyId, id));
    op.delete(entry.key);
    for (const rec of records) {
      const day = dayOf(Date.parse(rec.time));
      const list = days.get(day);
      if (list) list.push(rec);
      else days.set(day, [rec]);
    }
  }
  const written: [number, DayTail][] = [];
  for (const [day, records] of days) {
    written.push([day, await mergeIntoDay(kv, op, day, records, tails.get(day))]);
  }
  const result = await op.commit();
  if (!result.ok) return false;
  for (const [day, tail] of written) tails.set(day, { ...tail, versionstamp: result.versionstamp });
  return true;
}

/** The day's last rolled-up row as the store has it: its number, records and versionstamp. */
async function readTail(kv: Deno.Kv, day: number): Promise<DayTail> {
  // ':' sorts after every digit: the range holds exactly the day's rolled-up rows.
  const range = { start: usageKey(rollupId(day, 0)), end: usageKey(encodeTime(day) + ROLLUP_TAG + ":") };
  for await (const last of kv.list<LedgerRow>(range, { reverse: true, limit: 1 })) {
    const id = String(last.key[1]);
    return {
      seq: Number(id.slice(-SEQ_DIGITS)),
      records: [...rowRecords(last.value)],
      versionstamp: last.versionstamp,
    };
  }
  return { seq: 0, records: [], versionstamp: null };
}

/**
 * Adds to `op` the day's last rolled-up row rewritten with `records` merged in, and rows after it as it fills;
 * returns the day's new last row (its versionstamp is the commit's, once it lands).
 */
async function mergeIntoDay(
  kv: Deno.Kv,
  op: Deno.AtomicOperation,
  day: number,
  records: UsageRecord[],
  known: DayTail | undefined,
): Promise<DayTail> {
  const tail = known ?? await readTail(kv, day);
  // The row this step rewrites must be as this pass last saw it, or absent if it saw none.
  op.check({ key: usageKey(rollupId(day, tail.seq)), versionstamp: tail.versionstamp });
  const before = keysOf(tail.records);
  const rollup = new DayRollup(day);
  for (const rec of tail.records) rollup.add(rec);
  for (const rec of records) rollup.add(rec);
  const encoder = new RecordEncoder();
  let seq = tail.seq;
  let batch = new Batch(undefined, false);
  let inBatch: UsageRecord[] = [];
  let lastRecords: UsageRecord[] = [];
  let first = true;
  const write = () => {
    const id = rollupId(day, seq);
    batch.seal(id);
    // A row after the rewritten one is new: another step may have made it meanwhile.
    if (!first) op.check({ key: usageKey(id), versionstamp: null });
    op.set(usageKey(id), batch.row);
    for (const [keyId, places] of batch.index) {
      op.set(usageByKeyKey(keyId, id), places);
      before.delete(keyId);
    }
    // Keys of the rewritten row that moved to a later row lose their index row here.
    for (const keyId of before) op.delete(usageByKeyKey(keyId, id));
    before.clear();
    lastRecords = inBatch;
    first = false;
  };
  for (const rec of rollup.records()) {
    const encoded = encoder.encode(rec);
    if (!batch.tryAdd(rec, encoded, encoder.names, encoder.bytes, day)) {
      write();
      seq++;
      batch = new Batch(undefined, false);
      inBatch = [];
      batch.tryAdd(rec, encoded, encoder.names, encoder.bytes, day);
    }
    inBatch.push(rec);
  }
  if (batch.records.length) write();
  return { seq, records: lastRecords, versionstamp: null };
}
