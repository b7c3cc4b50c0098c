/**
 * @module Retention: ledger rows older than the kept age are rolled up into per-day records (`day_rollup.ts`)
 * and deleted, a few rows per step, off the request path, so the ledger stops growing without bound while
 * every report of requests and tokens keeps its totals.
 *
 * A day's rolled-up records live in the ledger's own layout (`day_rows.ts`), so every reader of the ledger
 * reads them as it reads any row. A step reads a few old rows, merges their records into their days' groups,
 * and in one commit rewrites the rolled-up rows that grew and deletes the old rows and their index rows. The
 * commit checks every row it read or rewrote: a step that raced another gateway's (on a shared store) fails
 * and is tried again, so no record is ever rolled up twice or lost. Token counters are not touched: the
 * tokens were counted when the requests were recorded.
 */
import { encodeTime } from "ulid";
import { DAY_MS, dayOf } from "./day_rollup.ts";
import { DayRows, isRollupId } from "./day_rows.ts";
import { type LedgerRow, rowRecords, USAGE_PREFIX, usageByKeyKey, usageKey } from "./kv_layout.ts";
import type { UsageRecord } from "./types.ts";

export { isRollupId, rollupId } from "./day_rows.ts";

export interface RetentionOptions {
  /** Rows whose records are all older than this many days are rolled up. */
  days: number;
  /**
   * Old rows read per step, at most (default 8, up to 2,000 records; fewer when their keys are many). Much
   * of a step's cost is its own (its commit, rewriting its days' rolled-up rows), so a few rows a step cost
   * little more than one; its work on the event loop is cut into pieces of about a row each, between which
   * requests are served.
   */
  rowsPerStep?: number;
  /**
   * Pause between steps, at least (default 20 ms); a step is followed by `PAUSE_FACTOR` times as long as it
   * took, so a pass takes at most a ninth of the time of the process and of the store it shares with requests.
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

/**
 * A step's pause as a multiple of its length. With 4, p99 latency at 16 connections rose to 2.02 × while a
 * pass ran (`deno task bench:retention`); a pass of 500,000 records took 85 s, so there is time to spare.
 */
const PAUSE_FACTOR = 8;

/** Old rows listed at a time. */
const LIST_BATCH = 3;

/** Mutations a step's old rows may take (a row and its index rows each): the commit allows 1,000 in all. */
const SOURCE_MUTATIONS = 400;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Lets the requests that arrived meanwhile run before the step goes on. */
const yieldToRequests = () => sleep(0);

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
  let rowsPerStep = Math.max(1, options.rowsPerStep ?? 8);
  let start: Deno.KvKey = [USAGE_PREFIX, ""];
  const days = new Map<number, DayRows>();
  while (!options.signal?.aborted) {
    const stepStarted = performance.now();
    const { rows, last } = await oldRows(kv, start, end, rowsPerStep);
    if (!rows.length) break;
    let landed: boolean;
    try {
      landed = await rollUpStep(kv, rows, days);
    } catch (error) {
      days.clear();
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
      // Another writer moved something: what this pass knows of the days' rows may be old.
      days.clear();
      report.retries++;
    }
    await sleep(Math.max(options.pauseMs ?? 20, PAUSE_FACTOR * (performance.now() - stepStarted)));
  }
  return report;
}

/** Up to `limit` old rows from `start` on, leaving rolled-up rows aside, within the mutation budget. */
async function oldRows(kv: Deno.Kv, start: Deno.KvKey, end: Deno.KvKey, limit: number) {
  const rows: OldRow[] = [];
  let last = start;
  let mutations = 0;
  // Each listed row is deserialized on the event loop, a batch at once, whether used or not: small batches
  // keep each such stretch short and read little past what the step takes.
  for await (const entry of kv.list<LedgerRow>({ start, end }, { batchSize: LIST_BATCH })) {
    if (isRollupId(String(entry.key[1]))) {
      last = entry.key;
      continue;
    }
    const records = rowRecords(entry.value);
    const cost = 1 + keysOf(records).size;
    if (rows.length >= limit || (rows.length > 0 && mutations + cost > SOURCE_MUTATIONS)) break;
    rows.push({ entry, records });
    await yieldToRequests();
    mutations += cost;
    last = entry.key;
  }
  return { rows, last };
}

const keysOf = (records: readonly UsageRecord[]) => new Set(records.flatMap((r) => r.keyId ?? []));

/** One step: the rows' records merged into their days' rolled-up rows, the rows deleted; one commit. */
async function rollUpStep(kv: Deno.Kv, rows: OldRow[], days: Map<number, DayRows>): Promise<boolean> {
  const op = kv.atomic();
  const touched = new Set<DayRows>();
  for (const { entry, records } of rows) {
    if (touched.size) await yieldToRequests();
    op.check(entry);
    const id = String(entry.key[1]);
    for (const keyId of keysOf(records)) op.delete(usageByKeyKey(keyId, id));
    op.delete(entry.key);
    for (const rec of records) {
      const dayMs = dayOf(Date.parse(rec.time));
      let day = days.get(dayMs);
      // Merged in place: a step whose commit does not land forgets every day (`rollUpOldRows`).
      if (!day) days.set(dayMs, day = await DayRows.load(kv, dayMs));
      day.add(rec);
      touched.add(day);
    }
  }
  for (const day of touched) {
    await yieldToRequests();
    day.write(op);
  }
  const result = await op.commit();
  if (!result.ok) return false;
  for (const day of touched) day.landed(result.versionstamp);
  // The pass goes through the ledger in time order: a day behind this step's is done.
  for (const [dayMs, day] of days) if (!touched.has(day)) days.delete(dayMs);
  return true;
}
