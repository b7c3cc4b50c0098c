import assert from "node:assert/strict";
import { RefusalFold } from "./refusal_fold.ts";
import type { UsageRecord } from "./types.ts";
import { sample } from "../../tests/support/usage_ledger.ts";

const refusal = (keyId: string, errorCode: string): UsageRecord =>
  sample({ keyId, errorCode, status: "rejected", httpStatus: 403, promptTokens: 0, completionTokens: 0 });

Deno.test("a key's refusals past the first few of a minute become one row per reason, counting each", () => {
  let now = 0;
  const rows: UsageRecord[] = [];
  const fold = new RefusalFold(5, (rec) => rows.push(rec), () => now);
  const kept: UsageRecord[] = [];
  const send = (rec: UsageRecord) => fold.take(rec) && kept.push(rec);
  for (let i = 0; i < 1_000; i++) send(refusal("key_a", i % 2 ? "domain_not_allowed" : "rate_limited"));
  for (let i = 0; i < 3; i++) send(refusal("key_b", "domain_not_allowed"));
  assert.equal(kept.length, 8, "five of key_a, three of key_b, each a row of its own");
  assert.equal(rows.length, 0, "the folded rows wait for the end of their minute");
  now = 60_000;
  send(refusal("key_a", "rate_limited"));
  assert.equal(kept.length, 9, "a new minute starts with rows of their own again");
  assert.deepEqual(
    rows.map((r) => [r.keyId, r.errorCode, r.count]),
    [["key_a", "domain_not_allowed", 498], ["key_a", "rate_limited", 497]],
  );
  for (let i = 0; i < 5; i++) send(refusal("key_a", "rate_limited"));
  fold.close();
  assert.deepEqual(rows.at(-1), refusal("key_a", "rate_limited"), "one folded refusal is a plain row");
  const counted = [...kept, ...rows].reduce((n, r) => n + (r.count ?? 1), 0);
  assert.equal(counted, 1_000 + 3 + 6);
});
