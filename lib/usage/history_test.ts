/** @module Reading the ledger back: order, key and user filters, `since` and the limit. */
import assert from "node:assert/strict";
import { listUsage, UsageLedger } from "./ledger.ts";
import { sample, storeTest } from "./test_support.ts";

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
