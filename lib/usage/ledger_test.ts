/**
 * @module The ledger against real stores (memory and file): queuing without waiting, exact rows and
 * counters under concurrency, period boundaries, the timer and close().
 */
import assert from "node:assert/strict";
import { listUsage, readTotals, UsageLedger } from "./ledger.ts";
import type { UsageRecord } from "./types.ts";
import { assertLedgerHolds, sample, storeTest } from "../../tests/support/usage_ledger.ts";

const NOW = new Date("2026-11-22T12:00:00.000Z");

/** Every record the ledger holds, oldest first, as the admin lists them. */
const stored = (kv: Deno.Kv) => listUsage(kv, { limit: 10_000 });

storeTest("record() queues synchronously and flush() makes rows and counters durable", async (kv) => {
  const ledger = new UsageLedger(kv, { flushIntervalMs: 60_000 });
  const rec = sample();
  assert.equal(ledger.record(rec), undefined);
  // Changing the caller's object afterwards must not change what is stored.
  rec.promptTokens = 999;
  assert.deepEqual(await stored(kv), []);
  await ledger.flush();
  assert.deepEqual(await stored(kv), [sample()]);
  assert.deepEqual(await readTotals(kv, "key", "key_a", NOW), { day: 15, week: 15, month: 15 });
  assert.deepEqual(await readTotals(kv, "user", "alice", NOW), { day: 15, week: 15, month: 15 });
  assert.deepEqual(await readTotals(kv, "user", "bob", NOW), { day: 0, week: 0, month: 0 });
  await ledger.close();
});

storeTest("records without a key, without a user or without tokens touch only what they name", async (kv) => {
  const ledger = new UsageLedger(kv);
  const records = [
    sample({ keyId: undefined, user: undefined, status: "rejected", httpStatus: 401, promptTokens: 0 }),
    sample({ keyId: "key_b", user: undefined, promptTokens: 7, completionTokens: 0 }),
    sample({ status: "error", httpStatus: 502, promptTokens: 0, completionTokens: 0 }),
  ];
  for (const rec of records) ledger.record(rec);
  await ledger.close();
  await assertLedgerHolds(kv, records);
  assert.deepEqual(await readTotals(kv, "key", "key_b", NOW), { day: 7, week: 7, month: 7 });
  assert.deepEqual(await readTotals(kv, "key", "key_a", NOW), { day: 0, week: 0, month: 0 });
  assert.deepEqual(await readTotals(kv, "user", "alice", NOW), { day: 0, week: 0, month: 0 });
  assert.equal((await listUsage(kv, { keyId: "key_b" })).length, 1);
  assert.equal((await listUsage(kv, { keyId: "key_a" })).length, 1);
});

storeTest("500 records from concurrent tasks: every row once, every counter exact", async (kv) => {
  const ledger = new UsageLedger(kv, { flushIntervalMs: 2 });
  const users = ["u0", "u1", "u2"];
  const recorded: UsageRecord[] = [];
  const flushes: Promise<void>[] = [];
  const task = async (t: number) => {
    for (let i = 0; i < 10; i++) {
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 3));
      const k = (t * 7 + i) % 10;
      const rec = sample({
        // Spread over a day, a week and a month boundary.
        time: new Date(Date.UTC(2026, 10, 30, 23, 59, 59, 990) + (t * 10 + i) % 20).toISOString(),
        keyId: `key_${k}`,
        user: users[k % 3],
        promptTokens: (t * 31 + i * 17) % 200,
        completionTokens: (t + i) % 3 === 0 ? 0 : (t * 13 + i) % 150,
        stream: i % 2 === 0,
      });
      ledger.record(rec);
      recorded.push(rec);
      if (i % 4 === 0) flushes.push(ledger.flush());
    }
  };
  await Promise.all(Array.from({ length: 50 }, (_, t) => task(t)));
  await Promise.all(flushes);
  await ledger.close();
  assert.equal(recorded.length, 500);
  assert.equal((await stored(kv)).length, 500);
  await assertLedgerHolds(kv, recorded);
  const sum = (list: UsageRecord[]) => list.reduce((s, r) => s + r.promptTokens + r.completionTokens, 0);
  const december = recorded.filter((r) => r.time >= "2026-12-01");
  assert.ok(december.length > 0 && december.length < 500);
  assert.equal(
    (await readTotals(kv, "user", "u1", new Date("2026-12-01T00:00:01Z"))).month,
    sum(december.filter((r) => r.user === "u1")),
  );
});

storeTest("two ledgers writing the same counters at once still add up exactly", async (kv) => {
  const a = new UsageLedger(kv, { flushIntervalMs: 1, batchSize: 7 });
  const b = new UsageLedger(kv, { flushIntervalMs: 1, batchSize: 5 });
  const recorded: UsageRecord[] = [];
  for (let i = 0; i < 120; i++) {
    const rec = sample({ promptTokens: i, completionTokens: 1, keyId: `key_${i % 2}` });
    (i % 2 ? a : b).record(rec);
    recorded.push(rec);
    if (i % 10 === 0) await new Promise((resolve) => setTimeout(resolve, 1));
  }
  await Promise.all([a.close(), b.close()]);
  await assertLedgerHolds(kv, recorded);
});

storeTest("records straddling day, week and month boundaries land in their own periods", async (kv) => {
  const ledger = new UsageLedger(kv);
  const at = (time: string, promptTokens: number) => sample({ time, promptTokens, completionTokens: 0 });
  const records = [
    at("2026-11-29T23:59:59.999Z", 1), // Sunday: W48, November
    at("2026-11-30T00:00:00.000Z", 10), // Monday: W49, November
    at("2026-11-30T23:59:59.999Z", 100), // last instant of November
    at("2026-12-01T00:00:00.000Z", 1000), // December, still W49
    at("2026-12-31T23:59:59.999Z", 10000), // 2026-W53
    at("2027-01-01T00:00:00.000Z", 100000), // 2027-01, still 2026-W53
  ];
  for (const rec of records) ledger.record(rec);
  await ledger.close();
  await assertLedgerHolds(kv, records);
  // Read from inside each period, away from the records' own instants.
  const totals = (iso: string) => readTotals(kv, "key", "key_a", new Date(iso));
  assert.equal((await totals("2026-11-27T12:00:00Z")).week, 1, "2026-W48");
  assert.equal((await totals("2026-12-03T12:00:00Z")).week, 1110, "2026-W49");
  assert.equal((await totals("2026-11-10T12:00:00Z")).month, 111, "November");
  assert.equal((await totals("2026-12-15T12:00:00Z")).month, 11000, "December");
  assert.equal((await totals("2026-12-29T12:00:00Z")).week, 110000, "2026-W53");
  assert.equal((await totals("2027-01-15T12:00:00Z")).month, 100000, "January");
  assert.equal((await totals("2026-11-30T12:00:00Z")).day, 110, "2026-11-30");
  assert.deepEqual(await readTotals(kv, "user", "alice", new Date("2027-01-01T12:00:00Z")), {
    day: 100000,
    week: 110000,
    month: 100000,
  });
});

storeTest("the timer writes queued records without a flush()", async (kv) => {
  const ledger = new UsageLedger(kv, { flushIntervalMs: 5 });
  ledger.record(sample());
  const deadline = Date.now() + 5000;
  while ((await stored(kv)).length === 0) {
    assert.ok(Date.now() < deadline, "the timer never wrote the record");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await ledger.close();
  await assertLedgerHolds(kv, [sample()]);
});

storeTest("close() flushes, and a record after close() is written without the timer", async (kv) => {
  const ledger = new UsageLedger(kv, { flushIntervalMs: 60_000 });
  const first = sample({ promptTokens: 1 });
  ledger.record(first);
  await ledger.close();
  await assertLedgerHolds(kv, [first]);
  const late = sample({ promptTokens: 2 });
  ledger.record(late);
  await ledger.flush();
  await assertLedgerHolds(kv, [first, late]);
  await ledger.close();
});

storeTest(
  "records list in their time order, and many records per commit stay within KV limits",
  async (kv) => {
    const ledger = new UsageLedger(kv, { flushIntervalMs: 60_000 });
    const long = (prefix: string, i: number) => `${prefix}${i}`.padEnd(128, "x");
    const records = Array.from({ length: 300 }, (_, i) =>
      sample({
        time: new Date(NOW.getTime() + i * 1000).toISOString(),
        keyId: long("key_", i),
        user: long("user", i),
        model: "m".repeat(256),
      }));
    for (const rec of records) ledger.record(rec);
    await ledger.close();
    await assertLedgerHolds(kv, records);
    const times = (await stored(kv)).map((r) => r.time);
    assert.deepEqual(times, records.map((r) => r.time));
  },
);

Deno.test("a malformed record is repaired, kept, counted and reported, never thrown", async () => {
  const kv = await Deno.openKv(":memory:");
  const errors: unknown[] = [];
  const ledger = new UsageLedger(kv, { onError: (e) => errors.push(e) });
  const before = Date.now();
  ledger.record(sample({ time: "yesterday", promptTokens: -1, completionTokens: 2.6 }));
  ledger.record(sample({ completionTokens: Number.NaN }));
  ledger.record(sample({ time: "1960-01-01T00:00:00Z" }));
  await ledger.close();
  assert.equal(errors.length, 3);
  assert.match(
    String(errors[0]),
    /^TypeError: Usage record repaired: time "yesterday" is not an ISO 8601 instant, used .*; promptTokens -1 is not a non-negative integer, counted as 0; completionTokens 2.6 is not a non-negative integer, counted as 3$/,
  );
  const kept = await stored(kv);
  assert.equal(kept.length, 3);
  assert.ok(Date.parse(kept[0].time) >= before);
  assert.deepEqual([kept[0].promptTokens, kept[0].completionTokens], [0, 3]);
  assert.deepEqual([kept[1].promptTokens, kept[1].completionTokens], [10, 0]);
  await assertLedgerHolds(kv, kept);
  kv.close();
});

Deno.test("an onError that throws breaks neither record() nor the writer", async () => {
  const kv = await Deno.openKv(":memory:");
  const ledger = new UsageLedger(kv, {
    onError: () => {
      throw new Error("reporter down");
    },
  });
  ledger.record(sample({ time: "nope" }));
  await ledger.close();
  assert.equal((await stored(kv)).length, 1);
  kv.close();
});

storeTest(
  "many large records: all written though the store refuses any value over 64 KiB, none lost",
  async (kv) => {
    const errors: unknown[] = [];
    const ledger = new UsageLedger(kv, { flushIntervalMs: 60_000, onError: (e) => errors.push(e) });
    const records = Array.from({ length: 200 }, (_, i) =>
      sample({
        keyId: `key_${i % 4}`,
        errorCode: `${i}:`.padEnd(1000 + (i % 5) * 700, i % 2 ? "x" : "é"),
        server: "服务器".repeat(i % 50),
        status: "error",
      }));
    for (const rec of records) ledger.record(rec);
    await ledger.close();
    assert.deepEqual(errors, []);
    // Some 550 KB of records: the store refuses any value over 64 KiB, so they were written in many rows,
    // each under the limit, or some would be missing and `errors` would say why.
    await assertLedgerHolds(kv, records);
    assert.deepEqual(await listUsage(kv, { keyId: "key_3" }), records.filter((r) => r.keyId === "key_3"));
  },
);

storeTest("whenWritten() waits for the batch's own time, where flush() writes it at once", async (kv) => {
  const ledger = new UsageLedger(kv, { flushIntervalMs: 300 });
  // The ledger's timer does not keep a process alive (a server does): the test keeps this one alive.
  const alive = setTimeout(() => {}, 5_000);
  ledger.record(sample());
  let landed = false;
  const patient = ledger.whenWritten().then(() => landed = true);
  await new Promise((resolve) => setTimeout(resolve, 100));
  // A flush asked for would have written it by now; the patient wait left the batch to fill.
  assert.equal(landed, false);
  assert.deepEqual(await stored(kv), []);
  await patient;
  assert.deepEqual(await stored(kv), [sample()]);

  ledger.record(sample({ keyId: "key_b" }));
  const later = ledger.whenWritten().then(() => landed = false);
  // An urgent wait meanwhile writes the batch, and the patient one resolves with it.
  const started = performance.now();
  await ledger.flush();
  await later;
  assert.ok(performance.now() - started < 250, "written by the flush, not the interval");
  assert.equal((await stored(kv)).length, 2);
  clearTimeout(alive);
  await ledger.close();
});
