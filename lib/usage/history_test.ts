/** @module Reading the ledger back: order, key and user filters, `since` and the limit. */
import assert from "node:assert/strict";
import { listUsage, type UsageFilter, UsageLedger } from "./ledger.ts";
import type { UsageRecord } from "./types.ts";
import { isBatchRow } from "./row_codec.ts";
import { rows, sample, storeTest, writeOldLayout } from "../../tests/support/usage_ledger.ts";

const minute = (n: number) => new Date(Date.UTC(2026, 10, 22, 12, n)).toISOString();

async function seeded(kv: Deno.Kv) {
  const ledger = new UsageLedger(kv);
  const records = [
    sample({ time: minute(0), keyId: "key_a", user: "alice" }),
    sample({ time: minute(1), keyId: "key_b", user: "bob" }),
    sample({ time: minute(2), keyId: undefined, user: undefined, status: "rejected" }),
    sample({ time: minute(3), keyId: "key_a", user: "alice" }),
    sample({ time: minute(4), keyId: "key_c", user: "alice" }),
  ];
  for (const rec of records) ledger.record(rec);
  await ledger.close();
  return records;
}

storeTest("listUsage returns records oldest first, filtered by key and user", async (kv) => {
  const records = await seeded(kv);
  assert.deepEqual(await listUsage(kv), records);
  assert.deepEqual(await listUsage(kv, { keyId: "key_a" }), [records[0], records[3]]);
  assert.deepEqual(await listUsage(kv, { user: "alice" }), [records[0], records[3], records[4]]);
  assert.deepEqual(await listUsage(kv, { keyId: "key_a", user: "bob" }), []);
  assert.deepEqual(await listUsage(kv, { keyId: "key_zzz" }), []);
});

storeTest("listUsage honours since (inclusive) and limit", async (kv) => {
  const records = await seeded(kv);
  assert.deepEqual(await listUsage(kv, { since: new Date(minute(3)) }), records.slice(3));
  assert.deepEqual(await listUsage(kv, { since: new Date(Date.parse(minute(3)) + 1) }), records.slice(4));
  assert.deepEqual(await listUsage(kv, { keyId: "key_a", since: new Date(minute(1)) }), [records[3]]);
  assert.deepEqual(await listUsage(kv, { limit: 2 }), records.slice(0, 2));
  assert.deepEqual(await listUsage(kv, { user: "alice", since: new Date(minute(1)), limit: 1 }), [
    records[3],
  ]);
  assert.deepEqual(await listUsage(kv, { since: new Date("1960-01-01T00:00:00Z") }), records);
  await assert.rejects(listUsage(kv, { limit: 0 }), RangeError);
  await assert.rejects(listUsage(kv, { since: new Date("nope") }), RangeError);
});

storeTest("a record queued after a newer one is still found by since", async (kv) => {
  const ledger = new UsageLedger(kv);
  // A long stream finishes after a short request that started later; its row id cannot go back in time.
  const late = sample({ time: minute(10), promptTokens: 1 });
  const early = sample({ time: minute(5), promptTokens: 2 });
  ledger.record(late);
  ledger.record(early);
  await ledger.close();
  assert.deepEqual(await listUsage(kv), [late, early]);
  assert.deepEqual(await listUsage(kv, { since: new Date(minute(6)) }), [late]);
  assert.deepEqual(await listUsage(kv, { since: new Date(minute(5)) }), [late, early]);
});

const START = Date.UTC(2026, 10, 21, 22);

/** Records of three keys and four users, a minute apart from `start`, some late, some without a key. */
function traffic(n: number, start = START): UsageRecord[] {
  return Array.from({ length: n }, (_, i) => {
    // Every seventh record finished late: its time is well before the records queued around it.
    const ms = start + i * 60_000 - (i % 7 === 0 ? 25 * 60_000 : 0);
    const keyless = i % 11 === 0;
    return sample({
      time: new Date(ms).toISOString(),
      keyId: keyless ? undefined : `key_${i % 3}`,
      user: keyless ? undefined : ["alice", "bob", "carol", "dave"][i % 4],
      status: keyless ? "rejected" : i % 5 === 0 ? "error" : "ok",
      promptTokens: i,
    });
  });
}

const at = (start: number, minutes: number) => new Date(start + minutes * 60_000);

/** Filters of every kind; the `since` ones fall among the records of `traffic(…, start)`. */
const filters = (start = START): UsageFilter[] => [
  {},
  { limit: 1 },
  { limit: 37 },
  { keyId: "key_1" },
  { keyId: "key_2", limit: 10 },
  { keyId: "key_nope" },
  { user: "bob" },
  { user: "carol", limit: 5 },
  { keyId: "key_0", user: "alice" },
  { since: at(start, 180) },
  { since: at(start, 183), limit: 20 },
  { since: at(start, 240), keyId: "key_2" },
  { since: at(start, 150), keyId: "key_1", user: "bob", limit: 4 },
  { since: at(start, 690) },
  { since: at(start, 2000) },
];

for (const [when, start] of [["past", START], ["recent", Date.now() - 700 * 60_000]] as const) {
  storeTest(
    `listings across many batch rows equal those of one row per record (${when} records)`,
    async (kv) => {
      await sameListings(kv, start);
    },
  );
}

/**
 * Past records sit in rows of ids drawn later, so a listing's range starts before them; recent ones in rows
 * of ids near their time, so a `since` narrows the scan as it does for rows of one record.
 */
async function sameListings(kv: Deno.Kv, start: number): Promise<void> {
  const records = traffic(700, start);
  // Small batches and large ones, so listings cross many rows and rows hold many records.
  const ledger = new UsageLedger(kv, { batchSize: 13, keylessPerMinute: 1000 });
  for (const rec of records.slice(0, 300)) ledger.record(rec);
  await ledger.flush();
  // Two ledgers are two processes: rows of the same millisecond would sort by chance, as they always did.
  await new Promise((resolve) => setTimeout(resolve, 5));
  const big = new UsageLedger(kv, { keylessPerMinute: 1000 });
  for (const rec of records.slice(300)) big.record(rec);
  await Promise.all([ledger.close(), big.close()]);
  assert.ok((await rows(kv, ["usage"])).length > 25);

  const old = await Deno.openKv(":memory:");
  try {
    await writeOldLayout(old, records);
    for (const filter of filters(start)) {
      const expected = await listUsage(old, filter);
      const empty = filter.keyId === "key_nope" || filter.since?.getTime() === at(start, 2000).getTime();
      assert.equal(expected.length === 0, empty, JSON.stringify(filter));
      assert.deepEqual(await listUsage(kv, filter), expected, JSON.stringify(filter));
    }
  } finally {
    old.close();
  }
}

storeTest(
  "rows of a store written before batching are still listed, before and among batch rows",
  async (kv) => {
    const records = traffic(120);
    await writeOldLayout(kv, records.slice(0, 50));
    const ledger = new UsageLedger(kv, { batchSize: 9, keylessPerMinute: 1000 });
    for (const rec of records.slice(50)) ledger.record(rec);
    await ledger.close();
    assert.ok((await rows(kv, ["usage"])).some((e) => !isBatchRow(e.value)));
    assert.ok((await rows(kv, ["usage"])).some((e) => isBatchRow(e.value)));
    assert.deepEqual(await listUsage(kv), records);
    for (const filter of filters()) {
      const oldOnly = await Deno.openKv(":memory:");
      try {
        await writeOldLayout(oldOnly, records);
        assert.deepEqual(
          await listUsage(kv, filter),
          await listUsage(oldOnly, filter),
          JSON.stringify(filter),
        );
      } finally {
        oldOnly.close();
      }
    }
  },
);

storeTest(
  "a batch of more than 256 records: a key's records are read back through two-byte places",
  async (kv) => {
    const ledger = new UsageLedger(kv, { flushIntervalMs: 60_000 });
    const records = Array.from({ length: 600 }, (_, i) =>
      sample({
        time: new Date(Date.UTC(2026, 10, 22, 12) + i).toISOString(),
        keyId: i % 3 ? "key_a" : "key_b",
      }));
    for (const rec of records) {
      ledger.record(rec);
    }
    await ledger.close();
    const batchRows = (await rows(kv, ["usage"])).filter((e) => isBatchRow(e.value));
    assert.ok(batchRows.length < 3, `${batchRows.length} rows`);
    assert.ok((await rows(kv, ["usage_by_key"])).some((e) => e.value instanceof Uint16Array));
    assert.deepEqual(await listUsage(kv, { keyId: "key_a", limit: 1000 }), records.filter((_, i) => i % 3));
    assert.deepEqual(
      await listUsage(kv, { keyId: "key_b", limit: 1000, newestFirst: true }),
      records.filter((_, i) => i % 3 === 0).reverse(),
    );
  },
);
