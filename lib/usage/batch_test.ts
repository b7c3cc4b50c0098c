/** @module Group commit sizing: a batch never exceeds KV's per-operation limits, however records look. */
import assert from "node:assert/strict";
import { serialize } from "node:v8";
import { Batch, MAX_ROW_BYTES } from "./batch.ts";
import { decodeRow, namesBytes, RecordEncoder } from "./row_codec.ts";
import { sample } from "../../tests/support/usage_ledger.ts";
import type { UsageRecord } from "./types.ts";

const encoder = new RecordEncoder();
const add = (batch: Batch, rec: UsageRecord) =>
  batch.tryAdd(rec, encoder.encode(rec), encoder.names, encoder.bytes, Date.parse(rec.time));

/** Bytes V8's serializer writes for `value`, less Node's own header, which Deno KV does not store. */
const serialized = (value: unknown) => serialize(value).length - 2;

Deno.test("an encoded record's size bound never falls short, and decoding gives the record back", () => {
  const records = [
    sample(),
    sample({ keyId: undefined, user: undefined, server: undefined, ttfbMs: undefined }),
    sample({ errorCode: "é".repeat(3000), model: "模型".repeat(500), latencyMs: 1.5e300 }),
    sample({ user: "\u{1F600}".repeat(200), promptTokens: 2 ** 40, completionTokens: 0 }),
    { ...sample(), extra: { nested: [1, 2, 3], text: "x".repeat(100) } } as UsageRecord,
    { httpStatus: 401, time: "2026-11-22T12:00:00.000Z", status: "rejected" } as UsageRecord,
  ];
  const batch = new Batch(undefined);
  for (const rec of records) {
    const encoded = encoder.encode(rec);
    assert.ok(encoder.bytes >= serialized(encoded), `${encoder.bytes} < ${serialized(encoded)}`);
    assert.ok(namesBytes(encoder.names) >= serialized(encoder.names));
    assert.ok(batch.tryAdd(rec, encoded, encoder.names, encoder.bytes, Date.parse(rec.time)));
  }
  assert.ok(batch.valueBytes >= serialized(batch.row), `${batch.valueBytes} < ${serialized(batch.row)}`);
  // Equal down to the field order and to fields present but undefined.
  const decoded = decodeRow(structuredClone(batch.row));
  assert.deepEqual(decoded, records);
  assert.deepEqual(decoded.map((r) => JSON.stringify(r)), records.map((r) => JSON.stringify(r)));
  assert.deepEqual(decoded.map((r) => Object.keys(r)), records.map((r) => Object.keys(r)));
  // A shape is its names and how its values are kept: the second record's absent texts are values.
  assert.equal(batch.fields.length, 5, "one list of names per shape");
  assert.equal(batch.row.kinds?.length, 5);

  // A hundred ordinary records fit one row, and take far less room than as objects.
  const hundred = new Batch(undefined);
  for (let i = 0; i < 100; i++) assert.ok(add(hundred, sample()));
  assert.ok(serialized(hundred.row) < serialized(Array.from({ length: 100 }, () => sample())) / 2);
});

Deno.test("a batch sums its counters per owner and period, once per distinct counter", () => {
  const batch = new Batch(undefined);
  for (let i = 0; i < 10; i++) assert.ok(add(batch, sample()));
  // Next day, same week and month: new day counters, merged week and month ones.
  assert.ok(add(batch, sample({ time: "2026-11-21T23:59:59.999Z", promptTokens: 100, completionTokens: 0 })));
  assert.ok(add(batch, sample({ keyId: undefined, user: undefined, status: "rejected" })));
  assert.ok(add(batch, sample({ promptTokens: 0, completionTokens: 0 })));
  batch.seal("01JTEST");
  const deltas = Object.fromEntries(
    batch.counters.map((c) => [c.key.join("|"), [c.delta, c.expireIn / 86_400_000]]),
  );
  assert.deepEqual(deltas, {
    "tokens|key|key_a|d:2026-11-22": [150n, 3],
    "tokens|key|key_a|w:2026-W47": [250n, 15],
    "tokens|key|key_a|m:2026-11": [250n, 70],
    "tokens|key|key_a|d:2026-11-21": [100n, 3],
    "tokens|user|alice|d:2026-11-22": [150n, 3],
    "tokens|user|alice|w:2026-W47": [250n, 15],
    "tokens|user|alice|m:2026-11": [250n, 70],
    "tokens|user|alice|d:2026-11-21": [100n, 3],
  });
  assert.equal(batch.sums.pending("key", "key_a", "w:2026-W47"), 250);
  assert.equal(batch.sums.pending("user", "alice", "d:2026-11-21"), 100);
  assert.equal(batch.sums.pending("user", "key_a", "d:2026-11-22"), 0);
  assert.equal(batch.records.length, 13);
  assert.deepEqual([...batch.byKey.keys()], ["key_a"]);
  assert.deepEqual(batch.byKey.get("key_a"), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12]);
  assert.deepEqual(batch.index, [["key_a", Uint8Array.from([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12])]]);
});

Deno.test("a batch stops at 90 counters and at its key bytes, and always takes a first record", () => {
  // Six new counters per record: 90 counters (checks) allow 15 records.
  const distinct = new Batch(undefined);
  let n = 0;
  while (add(distinct, sample({ keyId: `k${n}`, user: `u${n}` }))) n++;
  assert.equal(n, 15);
  // Without tokens a record adds no counter, only its key's index row.
  const free = new Batch(undefined);
  for (let i = 0; i < 100; i++) {
    assert.ok(add(free, sample({ keyId: `k${i}`, promptTokens: 0, completionTokens: 0 })));
  }

  // Very long names: key bytes, not counters, end the batch, still far below KV's 80 KiB of keys.
  const long = new Batch(undefined);
  n = 0;
  while (add(long, sample({ keyId: `k${n}`.padEnd(600, "k"), user: `u${n}`.padEnd(600, "u") }))) n++;
  assert.ok(n >= 1 && n < 15, String(n));
  assert.ok(long.keyBytes <= 40_000 && long.keyBytes > 30_000, String(long.keyBytes));
  const huge = new Batch(undefined);
  assert.ok(add(huge, sample({ errorCode: "x".repeat(100_000) })), "a first record always fits");
});

Deno.test("large records: a batch row stays under the bound, which is well under KV's value limit", () => {
  const batch = new Batch(undefined);
  let n = 0;
  while (add(batch, sample({ errorCode: `${n}`.padEnd(2000, "é"), keyId: `key_${n % 3}` }))) n++;
  assert.ok(n > 5 && n < 100, String(n));
  assert.ok(batch.valueBytes <= MAX_ROW_BYTES);
  assert.ok(serialized(batch.row) <= batch.valueBytes);
  assert.ok(serialized(batch.row) < 65_536);
});

Deno.test("a row keeps each text once, and a row written before that reads as it did", () => {
  const records = Array.from(
    { length: 50 },
    (_, i) => sample({ latencyMs: i, user: i % 2 ? "\u{1F600}é" : "bob" }),
  );
  // An instant written otherwise than `isoTime` writes it is kept as its text.
  records.push(sample({ time: "2026-11-22T12:00:00Z" }));
  const batch = new Batch(undefined);
  for (const rec of records) assert.ok(add(batch, rec));
  const row = batch.row;
  assert.equal(new Set(row.strings).size, row.strings!.length);
  assert.ok(row.records.slice(0, 50).every((values) => values.every((v) => typeof v !== "string")));
  assert.deepEqual(decodeRow(structuredClone(row)), records);
  assert.ok(batch.valueBytes >= serialized(row), `${batch.valueBytes} < ${serialized(row)}`);

  const rec = sample({ ttfbMs: undefined });
  const listed = { fields: [Object.keys(rec)], records: [[0, ...Object.values(rec)]] };
  assert.deepEqual(decodeRow(listed), [rec]);
  assert.deepEqual(Object.keys(decodeRow(listed)[0]), Object.keys(rec));
});

Deno.test("ordinary records: a row of the largest size holds several hundred", () => {
  const batch = new Batch(undefined);
  let n = 0;
  while (add(batch, sample({ latencyMs: n + 0.5, ttfbMs: n + 0.25 }))) n++;
  assert.ok(n > 400, `${n} records`);
  assert.ok(serialized(batch.row) <= batch.valueBytes && batch.valueBytes <= MAX_ROW_BYTES);
});
