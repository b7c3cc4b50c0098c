import assert from "node:assert/strict";
import { listUsage, type UsageRecord } from "./mod.ts";
import { storeTest } from "../../tests/support/usage_ledger.ts";
import { isRollupId, rollUpOldRows } from "./retention.ts";
import { type LedgerRow, rowRecords, USAGE_PREFIX } from "./kv_layout.ts";
import { groupOf } from "./day_rollup.ts";
import { seedUsage } from "../../scripts/seed_usage.ts";
import { usageTotals } from "../../tests/support/usage_totals.ts";

const NOW = Date.parse("2026-11-25T12:00:00Z");
const DAY_MS = 86_400_000;
const ALL = 1_000_000;

async function rowIds(kv: Deno.Kv): Promise<string[]> {
  return (await Array.fromAsync(kv.list({ prefix: [USAGE_PREFIX] }))).map((e) => String(e.key[1]));
}

storeTest(
  "rows past the kept age are rolled up into days: every total the same, old rows gone",
  async (kv) => {
    await seedUsage(kv, { records: 20_000, days: 120, keys: 3, now: NOW });
    const before = await listUsage(kv, { limit: ALL });
    const byKeyBefore = await listUsage(kv, { keyId: "key_seed_3", limit: ALL });
    const cutoff = Math.floor((NOW - 90 * DAY_MS) / DAY_MS) * DAY_MS;

    const report = await rollUpOldRows(kv, { days: 90, now: () => NOW, pauseMs: 0 });
    assert.ok(report.rows > 0 && report.records > 1_000, JSON.stringify(report));

    const after = await listUsage(kv, { limit: ALL });
    assert.deepEqual(usageTotals(after), usageTotals(before));
    assert.deepEqual(
      usageTotals(await listUsage(kv, { keyId: "key_seed_3", limit: ALL })),
      usageTotals(byKeyBefore),
    );
    const recent = (list: UsageRecord[]) => list.filter((r) => Date.parse(r.time) >= cutoff);
    assert.deepEqual(recent(after), recent(before), "rows within the kept age are untouched");
    const rolled = (await rowIds(kv)).filter(isRollupId);
    assert.ok(
      rolled.length > 0 && rolled.length <= 31,
      `${rolled.length} rolled-up rows for 30 days and a part`,
    );
    const old = (list: UsageRecord[]) => list.filter((r) => Date.parse(r.time) < cutoff).length;
    assert.ok(old(after) < old(before) / 4, `${old(before)} old records → ${old(after)}`);
    // A row that straddles the cutoff is kept whole: what precedes the first record of a kept row is rolled up.
    const kept = (await Array.fromAsync(kv.list<LedgerRow>({ prefix: [USAGE_PREFIX] })))
      .filter((e) => !isRollupId(String(e.key[1])));
    const keptFrom = Math.min(...kept.flatMap((e) => rowRecords(e.value).map((r) => Date.parse(r.time))));
    assert.ok(keptFrom < cutoff && keptFrom > cutoff - 10 * DAY_MS, new Date(keptFrom).toISOString());
    assert.ok(
      after.filter((r) => Date.parse(r.time) < keptFrom).every((r) => r.time.endsWith("T00:00:00.000Z")),
      "what is older than the kept age is one record per day and group",
    );

    const again = await rollUpOldRows(kv, { days: 90, now: () => NOW, pauseMs: 0 });
    assert.equal(again.rows, 0, "a second pass finds nothing to do");
    assert.deepEqual(usageTotals(await listUsage(kv, { limit: ALL })), usageTotals(before));
  },
);

storeTest("two passes at once (two gateways on one store) never roll a row up twice", async (kv) => {
  await seedUsage(kv, { records: 3_000, days: 100, keys: 5, now: NOW });
  const before = usageTotals(await listUsage(kv, { limit: ALL }));
  const options = { days: 30, now: () => NOW, pauseMs: 0, rowsPerStep: 3 };
  const oldRows = (await rowIds(kv)).length;
  const reports = await Promise.all([rollUpOldRows(kv, options), rollUpOldRows(kv, options)]);
  const left = (await rowIds(kv)).filter((id) => !isRollupId(id)).length;
  // However the two interleaved, each old row was rolled up by exactly one of them.
  assert.equal(reports[0].rows + reports[1].rows, oldRows - left, JSON.stringify(reports));
  assert.deepEqual(usageTotals(await listUsage(kv, { limit: ALL })), before);
});

storeTest("a day rolled up over many steps holds each of its groups once, across rows", async (kv) => {
  // 400 keys give a day well over a thousand groups, more than one rolled-up row holds.
  await seedUsage(kv, { records: 30_000, days: 2, keys: 400, now: NOW });
  const before = usageTotals(await listUsage(kv, { limit: ALL }));
  const report = await rollUpOldRows(kv, { days: 0, now: () => NOW, pauseMs: 0, rowsPerStep: 1 });
  assert.ok(report.steps > 20, JSON.stringify(report));
  const rolled = (await listUsage(kv, { limit: ALL })).filter((r) => r.time.endsWith("T00:00:00.000Z"));
  const groups = new Map<string, number>();
  for (const rec of rolled) {
    const id = `${rec.time} ${groupOf(rec)}`;
    groups.set(id, (groups.get(id) ?? 0) + 1);
  }
  const twice = [...groups].filter(([, n]) => n > 1);
  assert.ok(rolled.length > 1000, `${rolled.length} rolled-up records`);
  assert.deepEqual(twice, [], "no group of a day is written twice");
  const rowsPerDay = Map.groupBy((await rowIds(kv)).filter(isRollupId), (id) => id.slice(0, 10));
  assert.ok([...rowsPerDay.values()].some((rows) => rows.length > 1), "a day takes several rows");
  assert.deepEqual(usageTotals(await listUsage(kv, { limit: ALL })), before);
});
