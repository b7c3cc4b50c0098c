import assert from "node:assert/strict";
import { UsageLedger } from "../usage/mod.ts";
import { sample } from "../../tests/support/usage_ledger.ts";
import { quotaUse, quotaUses } from "./quota_use.ts";

Deno.test("use against quota is what the ledger counted in the current periods, beside each cap", async () => {
  using kv = await Deno.openKv(":memory:");
  const now = new Date(Date.UTC(2026, 10, 25, 12)); // a Wednesday
  const ledger = new UsageLedger(kv);
  ledger.record(sample({ time: "2026-11-25T09:00:00.000Z", keyId: "k1", user: "ana" })); // 15 tokens
  ledger.record(sample({ time: "2026-11-24T09:00:00.000Z", keyId: "k1", user: "ana" })); // this week
  ledger.record(sample({ time: "2026-11-02T09:00:00.000Z", keyId: "k1", user: "ana" })); // this month
  ledger.record(sample({ time: "2026-11-25T10:00:00.000Z", keyId: "k2", user: "ana" }));
  await ledger.close();

  assert.deepEqual(await quotaUse(kv, "key", "k1", { dailyTokens: 10, monthlyTokens: 1000 }, now), [
    { period: "day", used: 15, cap: 10, resets: "2026-11-26T00:00:00.000Z" },
    { period: "month", used: 45, cap: 1000, resets: "2026-12-01T00:00:00.000Z" },
  ]);
  const users = await quotaUses(kv, "user", [{ id: "ana", quotas: { weeklyTokens: 100 } }], now);
  assert.deepEqual(users.get("ana"), [{
    period: "week",
    used: 45,
    cap: 100,
    resets: "2026-11-30T00:00:00.000Z",
  }]);
  assert.deepEqual(await quotaUse(kv, "key", "k2", {}, now), [], "no cap, no bar");
});
