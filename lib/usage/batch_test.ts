/** @module Group commit sizing: a batch never exceeds KV's per-operation limits, however records look. */
import assert from "node:assert/strict";
import { MAX_BATCH_RECORDS, mergeCounters, prepare, takeBatch } from "./batch.ts";
import { sample } from "./test_support.ts";

let seq = 0;
const id = () => `01J${String(seq++).padStart(23, "0")}`;

Deno.test("prepare lists a record's rows and counters", () => {
  const full = prepare(sample(), id);
  assert.equal(full.rows.length, 2);
  assert.deepEqual(full.counters.map((c) => c.key.join("|")), [
    "tokens|key|key_a|d:2026-11-22",
    "tokens|key|key_a|w:2026-W47",
    "tokens|key|key_a|m:2026-11",
    "tokens|user|alice|d:2026-11-22",
    "tokens|user|alice|w:2026-W47",
    "tokens|user|alice|m:2026-11",
  ]);
  assert.ok(full.counters.every((c) => c.delta === 15n));
  assert.deepEqual(full.counters.map((c) => c.expireIn / 86_400_000), [3, 15, 70, 3, 15, 70]);
  const anonymous = prepare(sample({ keyId: undefined, user: undefined }), id);
  assert.equal(anonymous.rows.length, 1);
  assert.deepEqual(anonymous.counters, []);
  assert.deepEqual(prepare(sample({ promptTokens: 0, completionTokens: 0 }), id).counters, []);
});

Deno.test("takeBatch caps records, distinct counters and key bytes", () => {
  const same = Array.from({ length: 250 }, () => prepare(sample(), id));
  assert.equal(takeBatch(same, MAX_BATCH_RECORDS).length, 100);
  assert.equal(takeBatch(same, 7).length, 7);
  assert.equal(mergeCounters(takeBatch(same, 100)).length, 6);
  assert.equal(mergeCounters(takeBatch(same, 100))[0].delta, 1500n);

  // Six new counters per record: 90 counters (checks) allow 15 records.
  const distinct = Array.from(
    { length: 50 },
    (_, i) => prepare(sample({ keyId: `k${i}`, user: `u${i}` }), id),
  );
  assert.equal(takeBatch(distinct, 100).length, 15);

  // Very long names: key bytes, not counters, end the batch, still far below KV's 80 KiB of keys.
  const long = Array.from(
    { length: 50 },
    (_, i) => prepare(sample({ keyId: `k${i}`.padEnd(600, "k"), user: `u${i}`.padEnd(600, "u") }), id),
  );
  const batch = takeBatch(long, 100);
  assert.ok(batch.length >= 1 && batch.length < 15);
  const bytes = batch.reduce((s, p) => s + p.rowBytes, 0) +
    mergeCounters(batch).reduce((s, c) => s + c.keyBytes, 0);
  assert.ok(bytes <= 40_000 && bytes > 30_000, String(bytes));

  assert.deepEqual(takeBatch([], 100), []);
});
