/**
 * Seeds a store with usage as a busy gateway would have written it over many days: ledger rows of up to 250
 * records each, with their per-key index rows, spread evenly over the days before now. For trying retention
 * on a large ledger (`GATEWAY_USAGE_RETENTION_DAYS`); token counters are not written, as old periods' would
 * have expired.
 *
 * Usage: `deno run -A scripts/seed_usage.ts <store.kv> [records=2000000] [days=120] [keys=50]`
 */
import { ulid } from "ulid";
import { Batch } from "../lib/usage/batch.ts";
import { usageByKeyKey, usageKey } from "../lib/usage/kv_layout.ts";
import { RecordEncoder } from "../lib/usage/row_codec.ts";
import type { UsageRecord } from "../lib/usage/mod.ts";

export interface SeedOptions {
  records: number;
  days: number;
  keys: number;
  /** The seed's end (default now). */
  now?: number;
}

const DAY_MS = 86_400_000;
const FORMATS = ["openai", "ollama", "responses", "anthropic"] as const;

/** The `i`-th of `n` records: varied keys, users, models, servers, outcomes; deterministic. */
function recordAt(i: number, n: number, options: SeedOptions, start: number): UsageRecord {
  const key = i % options.keys;
  const refused = i % 23 === 0;
  const failed = i % 41 === 0;
  const rec: UsageRecord = {
    time: new Date(start + Math.floor((i / n) * options.days * DAY_MS)).toISOString(),
    keyId: `key_seed_${key}`,
    user: `user_${key % 7}`,
    model: `model_${key % 3}`,
    server: refused ? undefined : `gpu${i % 4}`,
    format: FORMATS[i % FORMATS.length],
    stream: i % 2 === 0,
    status: refused ? "rejected" : failed ? "error" : "ok",
    httpStatus: refused ? 429 : failed ? 502 : 200,
    promptTokens: refused ? 0 : 20 + (i % 200),
    completionTokens: refused || failed ? 0 : 5 + (i % 300),
    tokenSource: "backend",
    latencyMs: 100 + (i % 900),
  };
  if (refused) rec.errorCode = "rate_limited";
  else if (failed) rec.errorCode = "bad_gateway";
  if (rec.server === undefined) delete rec.server;
  return rec;
}

/** Writes the records in ledger rows; returns how many rows. */
export async function seedUsage(kv: Deno.Kv, options: SeedOptions): Promise<number> {
  const start = (options.now ?? Date.now()) - options.days * DAY_MS;
  const encoder = new RecordEncoder();
  let batch = new Batch(undefined, false);
  let rows = 0;
  const pending: Promise<unknown>[] = [];
  const write = async (full: Batch) => {
    full.seal(ulid(full.maxTimeMs));
    const op = kv.atomic().set(usageKey(full.id), full.row);
    for (const [keyId, places] of full.index) op.set(usageByKeyKey(keyId, full.id), places);
    await op.commit();
  };
  for (let i = 0; i < options.records; i++) {
    const rec = recordAt(i, options.records, options, start);
    const encoded = encoder.encode(rec);
    const timeMs = Date.parse(rec.time);
    if (!batch.tryAdd(rec, encoded, encoder.names, encoder.bytes, timeMs)) {
      pending.push(write(batch));
      rows++;
      batch = new Batch(undefined, false);
      batch.tryAdd(rec, encoded, encoder.names, encoder.bytes, timeMs);
      if (pending.length >= 16) await Promise.all(pending.splice(0));
    }
  }
  if (batch.records.length) pending.push(write(batch)), rows++;
  await Promise.all(pending);
  return rows;
}

if (import.meta.main) {
  const [path, records = "2000000", days = "120", keys = "50"] = Deno.args;
  if (!path) throw new Error("usage: seed_usage.ts <store.kv> [records] [days] [keys]");
  const kv = await Deno.openKv(path);
  const started = performance.now();
  const options = { records: Number(records), days: Number(days), keys: Number(keys) };
  const rows = await seedUsage(kv, options);
  kv.close();
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  console.log(`${options.records} records in ${rows} rows over ${options.days} days, ${seconds} s: ${path}`);
}
