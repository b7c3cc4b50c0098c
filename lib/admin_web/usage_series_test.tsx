import assert from "node:assert/strict";
import { ulid } from "ulid";
import { renderToString } from "preact-render-to-string";
import { DAYS, HOURS, UsageSeries } from "./usage_series.ts";
import { UsageCharts } from "./charts.tsx";
import { usageKey } from "../usage/kv_layout.ts";
import type { UsageRecord } from "../usage/types.ts";
import { sample } from "../../tests/support/usage_ledger.ts";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

async function write(kv: Deno.Kv, time: number, over: Partial<UsageRecord> = {}) {
  const rec = sample({ time: new Date(time).toISOString(), keyId: "k1", user: "alice", ...over });
  await kv.set(usageKey(ulid(time)), rec);
  return rec.promptTokens + rec.completionTokens;
}

Deno.test("the series bucket the ledger per hour (48) and per day (30), for everyone, a key and a user", async () => {
  using kv = await Deno.openKv(":memory:");
  let now = Date.UTC(2026, 10, 24, 10, 30);
  const series = new UsageSeries(kv, () => now);
  const tokens = await write(kv, now - 10 * 60_000);
  await write(kv, now - 3 * HOUR, { keyId: "k2", user: undefined });
  await write(kv, now - 5 * DAY, { keyId: "k1" });
  await write(kv, now - 31 * DAY, { keyId: "k1" });

  const all = await series.series("all");
  assert.equal(all.hours.length, HOURS);
  assert.equal(all.days.length, DAYS);
  assert.equal(all.hours.at(-1)!.start, Date.UTC(2026, 10, 24, 10));
  assert.deepEqual(all.hours.at(-1), { start: Date.UTC(2026, 10, 24, 10), requests: 1, tokens });
  assert.equal(all.hours.at(-4)!.requests, 1, "three hours back");
  assert.equal(all.days.at(-1)!.requests, 2);
  assert.equal(all.days.at(-6)!.requests, 1, "five days back");
  assert.equal(all.days.reduce((n, p) => n + p.requests, 0), 3, "older than 30 days is left out");
  assert.deepEqual(await series.scopes(), ["key:k1", "key:k2", "user:alice"]);
  assert.equal((await series.series("key:k2")).days.at(-1)!.requests, 1);
  assert.equal((await series.series("user:alice")).days.reduce((n, p) => n + p.requests, 0), 2);

  await write(kv, now - 1000, { keyId: "k2", status: "rejected", count: 7 });
  assert.equal(
    (await series.series("key:k2")).hours.at(-1)!.requests,
    7,
    "a folded row counts as its refusals",
  );

  now += 2 * HOUR;
  await write(kv, now - 1000);
  const later = await series.series("all");
  assert.equal(later.hours.at(-1)!.requests, 1, "new rows are read incrementally");
  assert.equal(later.days.at(-1)!.requests, 10, "and nothing is counted twice");
});

Deno.test("the charts are self-contained SVG with one bar per non-empty bucket", async () => {
  using kv = await Deno.openKv(":memory:");
  const now = Date.UTC(2026, 10, 24, 10, 30);
  const series = new UsageSeries(kv, () => now);
  await write(kv, now - HOUR);
  await write(kv, now - 2 * DAY);
  const html = renderToString(
    <UsageCharts
      series={await series.series("all")}
      scope="all"
      scopes={[{ value: "key:k1", label: "Key k1" }]}
    />,
  );
  assert.equal((html.match(/<svg /g) ?? []).length, 4);
  assert.equal((html.match(/<rect /g) ?? []).length, 1 + 1 + 2 + 2);
  assert.doesNotMatch(html, /https?:\/\/(?!www\.w3\.org)/, "nothing loaded from elsewhere");
  assert.match(html, /data-chart="requests-per-hour"/);
  assert.match(html, /<option value="key:k1">Key k1<\/option>/);
});
