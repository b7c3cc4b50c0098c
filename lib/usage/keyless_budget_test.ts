import assert from "node:assert/strict";
import { KEYLESS_ROW_TTL_MS, KeylessBudget } from "./keyless_budget.ts";
import { UsageLedger } from "./ledger.ts";
import { prepare } from "./batch.ts";
import { rows, sample, storeTest } from "./test_support.ts";

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

Deno.test("only key-less refusals get rows that expire", () => {
  const id = () => "01J";
  assert.equal(prepare(keyless(), id).expireIn, KEYLESS_ROW_TTL_MS);
  assert.equal(prepare(sample({ status: "rejected", httpStatus: 429 }), id).expireIn, undefined);
  assert.equal(prepare(sample(), id).expireIn, undefined);
  // A failure before any key was looked at (the store down) is the gateway's, not a stranger's: kept.
  assert.equal(
    prepare(sample({ keyId: undefined, status: "error", httpStatus: 503 }), id).expireIn,
    undefined,
  );
});

storeTest(
  "a flood of key-less refusals leaves only the budget's rows; refusals of a known key are all kept",
  async (kv) => {
    const notices: string[] = [];
    const ledger = new UsageLedger(kv, { keylessPerMinute: 4, onNotice: (m) => notices.push(m) });
    for (let i = 0; i < 200; i++) ledger.record(keyless(i % 2));
    for (let i = 0; i < 30; i++) {
      ledger.record(
        sample({ status: "rejected", httpStatus: 429, promptTokens: 0 }),
      );
    }
    await ledger.flush();
    const stored = (await rows(kv, ["usage"])).map((r) => r.value as ReturnType<typeof sample>);
    assert.equal(stored.filter((r) => r.keyId === undefined).length, 4);
    assert.equal(stored.filter((r) => r.keyId === "key_a").length, 30);
    assert.equal(ledger.keylessSkipped, 196);
    await ledger.close();
    assert.equal(notices.length, 1);
    assert.match(
      notices[0],
      /^196 refusal\(s\) without a valid key in the last minute were counted but not recorded/,
    );
  },
);
