import assert from "node:assert/strict";
import { listUsage, readTotals } from "../lib/usage/mod.ts";
import type { UsageRecord } from "../lib/usage/types.ts";
import { Scenario, USER_HELLO } from "./harness.ts";

const A = "/v1/chat/completions";
const B = "/v1/chat.php";

function sumBy(records: UsageRecord[], pick: (r: UsageRecord) => string | undefined) {
  const sums = new Map<string, number>();
  for (const r of records) {
    const id = pick(r);
    if (id !== undefined) sums.set(id, (sums.get(id) ?? 0) + r.promptTokens + r.completionTokens);
  }
  return sums;
}

Deno.test("50 streams at once, some broken, plus refusals: every record and counter adds up exactly", async () => {
  // Both take all 50 at once, so every flaky stream is in flight before its breaker can open.
  await using s = await Scenario.start([{ name: "good", slots: 50 }, { name: "flaky", slots: 50 }]);
  await s.gw.catalog.users.add({ name: "ana" });
  await s.gw.catalog.clusters.add({ name: "good-only", servers: ["good"] });
  await s.gw.catalog.clusters.add({ name: "flaky-only", servers: ["flaky"] });
  const keys = [
    await s.gw.key({ user: "ana", cluster: "good-only" }),
    await s.gw.key({ user: "ana", cluster: "flaky-only" }),
    await s.gw.key({ cluster: "good-only" }),
  ];
  s.fake("good").reply = (body) => ({ content: `answer for ${JSON.stringify(body.messages).length} chars` });
  s.fake("flaky").reply = () => ({ content: "one two three four five six" });
  s.fake("flaky").streamFault = { after: 3, kind: "crash" };

  const requests = Array.from({ length: 50 }, async (_, i) => {
    const path = i % 2 ? A : B;
    const messages = [{ role: "user", content: "x".repeat(i + 1) }];
    const res = await s.gw.post(path, keys[i % 3], { messages, stream: true });
    await res.text();
  });
  const refusals = [
    s.gw.post(A, "gwk_unknown", { messages: USER_HELLO }),
    s.gw.post(B, keys[0], { messages: [] }),
    s.gw.post(A, keys[2], { messages: USER_HELLO }),
  ].map(async (p) => await (await p).text());
  await Promise.all([...requests, ...refusals]);

  const ledger = s.gw.ledger;
  await ledger.flush();
  const records = await listUsage(s.gw.kv, { limit: 10_000 });
  assert.equal(records.length, 53, "one record per request");
  const byStatus = Object.groupBy(records, (r) => r.status);
  assert.equal(byStatus.ok?.length, 34, "33 good streams and one whole answer");
  assert.equal(byStatus.partial?.length, 17, "the flaky key's streams broke");
  assert.equal(byStatus.rejected?.length, 2);
  assert.ok(byStatus.partial!.every((r) => r.tokenSource === "estimate" && r.completionTokens > 0));
  assert.ok(byStatus.ok!.every((r) => r.tokenSource === "backend"));

  const now = new Date();
  for (const [keyId, sum] of sumBy(records, (r) => r.keyId)) {
    const totals = await readTotals(s.gw.kv, "key", keyId, now);
    assert.deepEqual(totals, { day: sum, week: sum, month: sum }, `key ${keyId}`);
  }
  const ana = sumBy(records, (r) => r.user).get("ana")!;
  assert.ok(ana > 0);
  assert.deepEqual(await readTotals(s.gw.kv, "user", "ana", now), { day: ana, week: ana, month: ana });
});

Deno.test("a flood without a valid key is refused and counted, but writes only the per-minute budget of rows", async () => {
  await using s = await Scenario.start([{ name: "a" }], { config: { keylessRecordsPerMinute: 5 } });
  const secret = await s.gw.key();
  const wrong = `${secret.slice(0, -4)}zzzz`;
  const flood = Array.from({ length: 60 }, (_, i) => {
    const path = [A, B, "/api/v1/chat/completions.php"][i % 3];
    return s.gw.post(path, i % 2 ? wrong : undefined, { model: "x", messages: USER_HELLO });
  });
  for (const [i, response] of (await Promise.all(flood)).entries()) {
    assert.equal(response.status, 401);
    const { error } = await response.json();
    assert.equal(error.code, "invalid_api_key");
    // Each in its path's format.
    if (i % 3 === 1) assert.equal(error.type, "proxy_error");
    else assert.equal(error.param, null);
  }
  const ok = await s.gw.post(A, secret, { model: "x", messages: USER_HELLO });
  assert.equal(ok.status, 200);
  await ok.body?.cancel();

  await s.gw.ledger.flush();
  const records = await listUsage(s.gw.kv, { limit: 10_000 });
  assert.equal(records.filter((r) => r.keyId === undefined).length, 5);
  assert.equal(records.filter((r) => r.keyId !== undefined && r.status === "ok").length, 1);
  assert.equal(s.gw.ledger.keylessSkipped, 55);
  const metrics = (await s.gw.deps.metrics!.scrape()).body;
  const refused = [...metrics.matchAll(/^gateway_requests_total\{[^}]*status="401"[^}]*\} (\d+)$/gm)];
  assert.equal(refused.reduce((n, m) => n + Number(m[1]), 0), 60, "metrics count every refusal");
});
