import assert from "node:assert/strict";
import { KEYLESS_ROW_TTL_MS, KeylessBudget } from "./keyless_budget.ts";
import { UsageLedger } from "./ledger.ts";
import { listUsage } from "./history.ts";
import { type LedgerRow, rowRecords } from "./kv_layout.ts";
import { assertLedgerHolds, recordingStore, sample, storeTest } from "../../tests/support/usage_ledger.ts";

const keyless = (n = 0) =>
  sample({ keyId: undefined, user: undefined, status: "rejected", httpStatus: 401 + n });

Deno.test("the budget lets a fixed number through per minute and reports the rest when the minute ends", () => {
  let now = 1_000_000;
  const reported: number[] = [];
  const budget = new KeylessBudget(3, (n) => reported.push(n), () => now);
  const first = Array.from({ length: 10 }, () => budget.take());
  assert.deepEqual(first, [true, true, true, false, false, false, false, false, false, false]);
  now += 59_999;
  assert.equal(budget.take(), false);
  assert.deepEqual(reported, [], "nothing is reported before the minute is over");
  now += 1;
  assert.equal(budget.take(), true);
  assert.deepEqual(reported, [8]);
  assert.equal(budget.skipped, 8);
  // A quiet minute reports nothing; close() reports the one still open.
  now += 120_000;
  for (let i = 0; i < 5; i++) budget.take();
  budget.close();
  assert.deepEqual(reported, [8, 2]);
  budget.close();
  assert.deepEqual(reported, [8, 2], "a minute is reported once");
  assert.equal(budget.skipped, 10);
});

Deno.test("a zero budget keeps no key-less row", () => {
  const budget = new KeylessBudget(0, () => {}, () => 0);
  assert.equal(budget.take(), false);
});

storeTest("only key-less refusals get rows that expire, in batch rows of their own", async (base) => {
  const { kv, sets } = recordingStore(base);
  const ledger = new UsageLedger(kv);
  const recorded = [
    sample(),
    keyless(0),
    keyless(1),
    sample({ status: "rejected", httpStatus: 429 }),
    // A failure before any key was looked at (the store down) is the gateway's, not a stranger's: kept.
    sample({ keyId: undefined, status: "error", httpStatus: 503 }),
    keyless(2),
    sample({ promptTokens: 3 }),
  ];
  for (const rec of recorded) ledger.record(rec);
  await ledger.close();
  await assertLedgerHolds(base, recorded);
  // Rows expire on their own when they hold key-less refusals, and only then; counters keep their own expiry.
  // A week is too long to wait for, so the expiry each row was written with is what shows it: the rows and
  // their expiry are read here, the one place a test looks at the layout.
  const rowSets = sets.filter((s) => s.key[0] === "usage");
  for (const set of rowSets) {
    const value = rowRecords((await base.get<LedgerRow>(set.key)).value!);
    const refusals = value.every((r) => r.keyId === undefined && r.status === "rejected");
    assert.equal(set.expireIn, refusals ? KEYLESS_ROW_TTL_MS : undefined, JSON.stringify(value));
  }
  assert.equal(rowSets.filter((s) => s.expireIn !== undefined).length, 2);
  // Key-less refusals have no key, so no index row: every index row is kept.
  assert.ok(sets.filter((s) => s.key[0] === "usage_by_key").every((s) => s.expireIn === undefined));
  assert.ok(sets.filter((s) => s.key[0] === "tokens").every((s) => s.expireIn !== KEYLESS_ROW_TTL_MS));
  // Split into rows of their own, they still list in the order they were recorded.
  assert.deepEqual(await listUsage(base), recorded);
});

storeTest(
  "a flood of key-less refusals leaves only the budget's rows; refusals of a known key are folded, each counted",
  async (kv) => {
    const notices: string[] = [];
    const ledger = new UsageLedger(kv, { keylessPerMinute: 4, onNotice: (m) => notices.push(m) });
    for (let i = 0; i < 200; i++) ledger.record(keyless(i % 2));
    for (let i = 0; i < 30; i++) {
      ledger.record(
        sample({ status: "rejected", httpStatus: 429, promptTokens: 0 }),
      );
    }
    // Closing writes the minute's folded rows.
    await ledger.close();
    const stored = await listUsage(kv);
    assert.equal(stored.filter((r) => r.keyId === undefined).length, 4);
    const known = stored.filter((r) => r.keyId === "key_a");
    assert.deepEqual(known.map((r) => r.count ?? 1), [1, 1, 1, 1, 1, 25]);
    assert.equal(ledger.keylessSkipped, 196);
    assert.equal(notices.length, 1);
    assert.match(
      notices[0],
      /^196 refusal\(s\) without a valid key in the last minute were counted but not recorded/,
    );
  },
);
