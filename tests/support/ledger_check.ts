/**
 * Reading a gateway's store file back after the process is gone, and checking what the ledger promises: every
 * record's rows and its counter increments were committed together, so the day, week and month token counters
 * of each key and user equal the sums of their records exactly, and the per-key index holds the same rows.
 */
import assert from "node:assert/strict";
import { PERIOD_NAMES, periodKeys, type UsageRecord } from "../../lib/usage/mod.ts";
import { type IndexRow, type LedgerRow, rowRecords } from "../../lib/usage/kv_layout.ts";

export interface StoredLedger {
  /** Records by `rowId/place` (a batch row holds many, in order). */
  records: Map<string, UsageRecord>;
  /** Per-key index rows: `keyId/rowId` → the places of that key's records in the row. */
  index: Map<string, number[]>;
  /** Token counters: `scope/owner/period` → tokens. */
  counters: Map<string, number>;
  /** Rate counters: `keyId/minute` → slots claimed. */
  rate: Map<string, number>;
}

/** Opens the store file (no gateway may be running on it) and reads every usage row and counter. */
export async function readLedger(path: string): Promise<StoredLedger> {
  const kv = await Deno.openKv(path);
  try {
    const ledger: StoredLedger = {
      records: new Map(),
      index: new Map(),
      counters: new Map(),
      rate: new Map(),
    };
    for await (const e of kv.list<LedgerRow>({ prefix: ["usage"] })) {
      rowRecords(e.value).forEach((rec, place) => ledger.records.set(`${String(e.key[1])}/${place}`, rec));
    }
    for await (const e of kv.list<IndexRow>({ prefix: ["usage_by_key"] })) {
      assert.ok(e.value instanceof Uint8Array, "index rows of batches name places");
      ledger.index.set(e.key.slice(1).join("/"), [...e.value]);
    }
    for await (const e of kv.list<Deno.KvU64>({ prefix: ["tokens"] })) {
      ledger.counters.set(e.key.slice(1).join("/"), Number(e.value.value));
    }
    for await (const e of kv.list<Deno.KvU64>({ prefix: ["rate"] })) {
      ledger.rate.set(e.key.slice(1).join("/"), Number(e.value.value));
    }
    return ledger;
  } finally {
    kv.close();
  }
}

/** The counters the records add up to, keyed like `StoredLedger.counters`. */
export function countersFromRecords(records: Iterable<UsageRecord>): Map<string, number> {
  const sums = new Map<string, number>();
  for (const rec of records) {
    const tokens = rec.promptTokens + rec.completionTokens;
    if (tokens === 0) continue;
    const labels = periodKeys(new Date(rec.time));
    for (const [scope, owner] of [["key", rec.keyId], ["user", rec.user]] as const) {
      if (owner === undefined) continue;
      for (const name of PERIOD_NAMES) {
        const id = `${scope}/${owner}/${labels[name]}`;
        sums.set(id, (sums.get(id) ?? 0) + tokens);
      }
    }
  }
  return sums;
}

const sorted = (map: Map<string, number>) =>
  Object.fromEntries([...map].sort(([a], [b]) => a.localeCompare(b)));

/**
 * Counters equal the sums of the records, and the per-key index names exactly the keyed records: one index
 * row per key of a batch row, with the places of that key's records in it.
 */
export function assertLedgerConsistent(ledger: StoredLedger): void {
  assert.deepEqual(sorted(ledger.counters), sorted(countersFromRecords(ledger.records.values())));
  const expected = new Map<string, number[]>();
  for (const [id, rec] of ledger.records) {
    if (rec.keyId === undefined) continue;
    const [row, place] = id.split("/");
    const key = `${rec.keyId}/${row}`;
    expected.set(key, [...expected.get(key) ?? [], Number(place)]);
  }
  assert.deepEqual(
    Object.fromEntries([...ledger.index].sort()),
    Object.fromEntries([...expected].sort()),
    "one index row per key of a batch, naming exactly its records",
  );
}

/** The records of one key. */
export function recordsOf(ledger: StoredLedger, keyId: string): UsageRecord[] {
  return [...ledger.records.values()].filter((rec) => rec.keyId === keyId);
}
