import assert from "node:assert/strict";
import { ulid } from "ulid";
import { UsageSummary } from "./usage_summary.ts";
import { usageKey } from "../usage/kv_layout.ts";
import type { UsageRecord } from "../usage/types.ts";
import { sample } from "../../tests/support/usage_ledger.ts";

function record(time: number, over: Partial<UsageRecord> = {}): UsageRecord {
  return sample({
    time: new Date(time).toISOString(),
    keyId: "k1",
    user: undefined,
    server: undefined,
    ...over,
  });
}

/** Writes a row the way the ledger does: the id is drawn when the record is queued (`idTime`). */
async function write(kv: Deno.Kv, rec: UsageRecord, idTime = Date.parse(rec.time)) {
  await kv.set(usageKey(ulid(idTime)), rec);
}

Deno.test("rows committed behind ones already read are counted once, not lost and not twice", async () => {
  using kv = await Deno.openKv(":memory:");
  let now = Date.UTC(2026, 10, 18, 12);
  const summary = new UsageSummary(kv, () => now);
  await write(kv, record(now - 1000));
  assert.equal((await summary.view()).totals.day.requests, 1);

  now += 2000;
  // Queued before the last scan but committed only now, after a newer row.
  await write(kv, record(now - 200));
  await write(kv, record(now - 2500));
  let view = await summary.view();
  assert.equal(view.totals.day.requests, 3);
  view = await summary.view();
  assert.equal(
    view.totals.day.requests,
    3,
    "a second refresh re-reads the overlap without counting it again",
  );
  assert.equal(view.keys[0].day.promptTokens, 30);
});

Deno.test("the day starts over at midnight while the week and month keep counting", async () => {
  using kv = await Deno.openKv(":memory:");
  let now = Date.UTC(2026, 10, 18, 23, 59, 59);
  const summary = new UsageSummary(kv, () => now);
  await write(kv, record(now - 60_000, { user: "alice" }));
  await write(kv, record(now - 30_000, { status: "partial", errorCode: "bad_gateway", server: "gpu1" }));
  let view = await summary.view();
  assert.equal(view.periods.day, "d:2026-11-18");
  assert.equal(view.totals.day.requests, 2);
  assert.equal(view.totals.day.failed, 1);
  assert.deepEqual(view.users.map((u) => [u.id, u.month.requests]), [["alice", 1]]);
  assert.equal(view.recent[0].server, "gpu1");

  now += 2_000;
  await write(kv, record(now - 500));
  view = await summary.view();
  assert.equal(view.periods.day, "d:2026-11-19");
  assert.equal(view.totals.day.requests, 1);
  assert.equal(view.totals.week.requests, 3);
  assert.equal(view.totals.month.requests, 3);
});

Deno.test("rows of earlier periods and of other months are left out", async () => {
  using kv = await Deno.openKv(":memory:");
  // Tuesday 1 December: the week began in November, the month did not.
  const now = Date.UTC(2026, 11, 1, 10);
  await write(kv, record(Date.UTC(2026, 10, 29, 10))); // Sunday: last week, last month
  await write(kv, record(Date.UTC(2026, 10, 30, 10))); // Monday: this week, last month
  await write(kv, record(now - 1000));
  const view = await new UsageSummary(kv, () => now).view();
  assert.equal(view.totals.day.requests, 1);
  assert.equal(view.totals.week.requests, 2);
  assert.equal(view.totals.month.requests, 1);
});

Deno.test("top keys are ordered by this month's tokens and labelled by name and hint", async () => {
  using kv = await Deno.openKv(":memory:");
  const now = Date.UTC(2026, 10, 18, 12);
  await write(kv, record(now - 3000, { keyId: "small", promptTokens: 1, completionTokens: 1 }));
  await write(kv, record(now - 2000, { keyId: "big", promptTokens: 100, completionTokens: 100 }));
  const view = await new UsageSummary(kv, () => now).view();
  assert.deepEqual(view.keys.map((k) => k.id), ["big", "small"]);
  assert.equal(view.keys[0].label, "big", "a key that is gone is shown by its id");
});

Deno.test("the key and user rows add up to the totals: other keys, no user and no key have rows", async () => {
  using kv = await Deno.openKv(":memory:");
  const now = Date.UTC(2026, 10, 18, 12);
  let t = now - 60_000;
  for (let i = 0; i < 23; i++) {
    await write(kv, record(t += 10, { keyId: `k${i}`, user: i < 3 ? "ana" : undefined }));
  }
  await write(
    kv,
    record(t += 10, { keyId: undefined, status: "rejected", httpStatus: 401, promptTokens: 0 }),
  );
  await write(
    kv,
    record(t += 10, { keyId: undefined, status: "rejected", httpStatus: 401, promptTokens: 0 }),
  );
  await write(kv, record(t += 10, { status: "rejected", httpStatus: 429, errorCode: "quota_exceeded" }));
  await write(kv, record(t += 10, { status: "error", httpStatus: 503, errorCode: "no_server" }));
  const view = await new UsageSummary(kv, () => now).view();
  assert.equal(view.totals.day.requests, 27);
  const sum = (rows: { day: { requests: number } }[]) => rows.reduce((n, r) => n + r.day.requests, 0);
  assert.equal(view.keys.length, 20);
  assert.equal(view.noKey.day.requests, 2);
  assert.equal(view.noKey.day.failed, 2);
  assert.ok(view.otherKeys);
  assert.equal(sum(view.keys) + view.otherKeys.day.requests + view.noKey.day.requests, 27);
  assert.equal(sum(view.users) + view.noUser.day.requests + view.noKey.day.requests, 27);
  assert.equal(view.noUser.day.requests, 22);

  assert.deepEqual(view.rejected.map((r) => [r.httpStatus, r.keyId, r.key]), [
    [429, "k1", "k1"],
    [401, undefined, undefined],
    [401, undefined, undefined],
  ]);
  assert.deepEqual(view.recent.map((r) => [r.httpStatus, r.code, r.key]), [[503, "no_server", "k1"]]);
});

Deno.test("a folded row of refusals counts as the refusals it stands for", async () => {
  using kv = await Deno.openKv(":memory:");
  const now = Date.UTC(2026, 10, 18, 12);
  await write(kv, record(now - 2000));
  await write(kv, record(now - 1000, { status: "rejected", httpStatus: 429, promptTokens: 0, count: 40 }));
  const view = await new UsageSummary(kv, () => now).view();
  assert.equal(view.totals.day.requests, 41);
  assert.equal(view.keys[0].day.failed, 40);
  assert.equal(view.rejected[0].count, 40);
});
