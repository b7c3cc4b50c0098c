import assert from "node:assert/strict";
import { LiveTotals } from "./live_totals.ts";
import { UsageLedger } from "./ledger.ts";
import { tokenCounterKey } from "./kv_layout.ts";
import { faultyStore, sample, storeTest } from "../../tests/support/usage_ledger.ts";

const KEY_DAY = tokenCounterKey("key", "key_a", "d:2026-11-22");
const USER_MONTH = tokenCounterKey("user", "alice", "m:2026-11");
const tokens = (totals: LiveTotals, key = KEY_DAY) => totals.peek([key])[0].tokens;

storeTest(
  "a total counts a record from the moment it is queued, and once only after it is written",
  async (kv) => {
    const totals = new LiveTotals(kv);
    const ledger = new UsageLedger(kv, { observer: totals, flushIntervalMs: 1 });
    await totals.read([KEY_DAY]);
    assert.equal(tokens(totals), 0);
    let expected = 0;
    // Reads race the group commits on purpose: a read that sees a batch whose commit has not returned yet
    // must not count it a second time.
    for (let round = 0; round < 30; round++) {
      for (let i = 0; i < 7; i++) {
        ledger.record(sample({ promptTokens: round, completionTokens: i }));
        expected += round + i;
      }
      await Promise.all([totals.read([KEY_DAY, USER_MONTH]), new Promise((r) => setTimeout(r, round % 3))]);
      assert.equal(tokens(totals), expected, `round ${round}`);
      assert.equal(tokens(totals, USER_MONTH), expected);
    }
    await ledger.close();
    const readFrom = performance.now();
    await totals.read([KEY_DAY]);
    const [total] = totals.peek([KEY_DAY]);
    assert.equal(total.tokens, expected);
    assert.ok(total.ageMs <= performance.now() - readFrom, "confirmed by the last read");
  },
);

storeTest("another process's tokens arrive with its commit and the next read", async (kv) => {
  const mine = new LiveTotals(kv);
  const ledger = new UsageLedger(kv, { observer: mine });
  const other = new UsageLedger(kv);
  ledger.record(sample({ promptTokens: 100, completionTokens: 0 }));
  other.record(sample({ promptTokens: 20, completionTokens: 0 }));
  assert.equal(tokens(mine), 100, "the other process's record is not written yet");
  await other.flush();
  await mine.read([KEY_DAY]);
  assert.equal(tokens(mine), 120);
  await ledger.flush();
  assert.equal(tokens(mine), 120, "our commit's total includes both");
  await Promise.all([ledger.close(), other.close()]);
});

storeTest("a commit that failed and was retried still counts once", async (base) => {
  const { kv } = faultyStore(base, ["throw", "land-then-throw"]);
  const totals = new LiveTotals(kv);
  const ledger = new UsageLedger(kv, { observer: totals, retryDelayMs: 1 });
  ledger.record(sample());
  assert.equal(tokens(totals), 15);
  await ledger.flush();
  await totals.read([KEY_DAY]);
  assert.equal(tokens(totals), 15);
  await ledger.close();
});

/**
 * `kv` whose commits land at once but report back only once `release()` is called, like a slow store round
 * trip held open for as long as the test needs; `landed` resolves when the first commit has landed.
 */
function heldAcks(kv: Deno.Kv) {
  const landed = Promise.withResolvers<void>();
  const released = Promise.withResolvers<void>();
  const atomic = () => {
    const op = kv.atomic();
    const wrapped: Deno.AtomicOperation = new Proxy(op, {
      get(target, prop) {
        if (prop === "commit") {
          return async () => {
            const result = await target.commit();
            landed.resolve();
            await released.promise;
            return result;
          };
        }
        const value = Reflect.get(target, prop, target);
        if (typeof value !== "function") return value;
        // Builder methods return the operation itself; hand back the wrapper so chains stay wrapped.
        return (...args: unknown[]) => value.apply(target, args) === target ? wrapped : undefined;
      },
    });
    return wrapped;
  };
  const held = new Proxy(kv, {
    get: (target, prop) => {
      if (prop === "atomic") return atomic;
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { kv: held, landed: landed.promise, release: () => released.resolve() };
}

storeTest("a read that sees a batch before its commit returned does not count it twice", async (base) => {
  const acks = heldAcks(base);
  const totals = new LiveTotals(acks.kv);
  const ledger = new UsageLedger(acks.kv, { observer: totals });
  ledger.record(sample());
  const flushed = ledger.flush();
  await acks.landed;
  assert.equal((await base.get<Deno.KvU64>(KEY_DAY)).value?.value, 15n, "the batch landed");
  // The commit cannot return before release(): this read sees the batch while it is still unwritten.
  await totals.read([KEY_DAY]);
  assert.equal(tokens(totals), 15, "while its commit is in flight");
  acks.release();
  await flushed;
  assert.equal(tokens(totals), 15, "after its commit returned");
  await ledger.close();
});

Deno.test("a counter's age is the time since it was last read; never read, it is of unknown age", async () => {
  using kv = await Deno.openKv(":memory:");
  let now = 1_000;
  const totals = new LiveTotals(kv, () => now);
  assert.deepEqual(totals.peek([KEY_DAY]), [{ tokens: 0, ageMs: Infinity }]);
  await totals.read([KEY_DAY]);
  assert.deepEqual(totals.peek([KEY_DAY]), [{ tokens: 0, ageMs: 0 }]);
  now += 750;
  assert.equal(totals.peek([KEY_DAY])[0].ageMs, 750);
  await totals.read([KEY_DAY]);
  assert.equal(totals.peek([KEY_DAY])[0].ageMs, 0);
});
