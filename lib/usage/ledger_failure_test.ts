/**
 * @module The ledger when commits fail: refused, thrown, or applied but reported as failed. Every record must
 * end up stored exactly once and every counter exact, whichever way the store misbehaved.
 */
import assert from "node:assert/strict";
import { listUsage, UsageLedger } from "./ledger.ts";
import { assertLedgerHolds, faultyStore, sample, storeTest } from "../../tests/support/usage_ledger.ts";

const records = Array.from({ length: 30 }, (_, i) => sample({ promptTokens: i + 1, keyId: `key_${i % 3}` }));

storeTest("failed commits are retried without loss or double counting", async (kv) => {
  const faults = ["refuse", "throw", "land-then-throw", "refuse", "land-then-throw", "throw"] as const;
  const store = faultyStore(kv, [...faults]);
  const errors: unknown[] = [];
  const ledger = new UsageLedger(store.kv, { batchSize: 7, retryDelayMs: 1, onError: (e) => errors.push(e) });
  for (const rec of records) ledger.record(rec);
  await ledger.close();
  assert.deepEqual(errors, []);
  await assertLedgerHolds(kv, records);
  // 5 batches of at most 7; the "land" faults' batches needed no second commit.
  assert.equal(store.commits(), 5 + 4);
});

storeTest("a commit that lands but reports failure is not repeated", async (kv) => {
  const store = faultyStore(kv, ["land-then-throw", "land-then-throw"]);
  const ledger = new UsageLedger(store.kv, { retryDelayMs: 1 });
  ledger.record(sample());
  await ledger.flush();
  ledger.record(sample({ promptTokens: 3 }));
  await ledger.close();
  await assertLedgerHolds(kv, [sample(), sample({ promptTokens: 3 })]);
  assert.equal(store.commits(), 2);
});

storeTest("when every attempt fails, flush() rejects and the records stay queued for later", async (kv) => {
  const store = faultyStore(kv, Array(3).fill("throw"));
  const errors: unknown[] = [];
  const ledger = new UsageLedger(store.kv, {
    maxAttempts: 3,
    retryDelayMs: 1,
    flushIntervalMs: 60_000,
    onError: (e) => errors.push(e),
  });
  for (const rec of records.slice(0, 5)) ledger.record(rec);
  const both = await Promise.allSettled([ledger.flush(), ledger.flush()]);
  for (const outcome of both) {
    assert.equal(outcome.status, "rejected");
    assert.match(
      String((outcome as PromiseRejectedResult).reason),
      /Cannot write 5 usage record\(s\) after 3/,
    );
  }
  assert.equal(errors.length, 1);
  assert.deepEqual(await listUsage(kv), []);
  // The store is healthy again: what was queued, and what came after, is written once.
  for (const rec of records.slice(5)) ledger.record(rec);
  await ledger.close();
  await assertLedgerHolds(kv, records);
});

Deno.test("concurrent flush() calls all resolve once their records are durable", async () => {
  const kv = await Deno.openKv(":memory:");
  const store = faultyStore(kv, ["refuse", "throw"]);
  const ledger = new UsageLedger(store.kv, { batchSize: 4, retryDelayMs: 1, flushIntervalMs: 60_000 });
  const flushes: Promise<void>[] = [];
  for (const [i, rec] of records.entries()) {
    ledger.record(rec);
    if (i % 3 === 0) {
      const seen = i + 1;
      flushes.push(
        ledger.flush().then(async () => {
          assert.ok((await listUsage(kv)).length >= seen);
        }),
      );
    }
  }
  await Promise.all(flushes);
  await ledger.close();
  await assertLedgerHolds(kv, records);
  kv.close();
});

storeTest(
  "a batch whose commit landed unconfirmed is retried as it was, never merged with later records",
  async (base) => {
    const store = faultyStore(base, ["land-then-throw"]);
    let storeDown = true;
    // While the store is down, the read that would confirm the commit fails too.
    const kv = new Proxy(store.kv, {
      get(target, prop) {
        if (prop === "get" && storeDown) return () => Promise.reject(new Error("connection reset"));
        const value = Reflect.get(target, prop, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const ledger = new UsageLedger(kv, { maxAttempts: 1, flushIntervalMs: 60_000, onError: () => {} });
    const first = [sample({ promptTokens: 1 }), sample({ promptTokens: 2, keyId: "key_b" })];
    for (const rec of first) ledger.record(rec);
    await assert.rejects(ledger.flush(), /Cannot write 2 usage record\(s\) after 1 attempts/);
    storeDown = false;
    const later = [sample({ promptTokens: 4 }), sample({ promptTokens: 8, user: "bob" })];
    for (const rec of later) ledger.record(rec);
    await ledger.close();
    await assertLedgerHolds(base, [...first, ...later]);
    assert.equal(store.commits(), 3, "the landed batch is found by its marker, the later one written once");
  },
);
