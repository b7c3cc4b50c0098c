/**
 * The admin feed follows the servers and the usage ledger live, and /metrics is Prometheus text that
 * counts what the gateway did.
 */
import assert from "node:assert/strict";
import parsePrometheusTextFormat from "parse-prometheus-text-format";
import { Scenario, USER_HELLO } from "./harness.ts";
import { ADMIN_TOKEN, type FeedEvent, FeedReader } from "./support/admin_session.ts";
import type { HealthView, UsageView } from "../lib/admin_web/shared/views.ts";
import { PATIENCE_MS } from "./support/wait_for.ts";

const AUTH = { Authorization: `Bearer ${ADMIN_TOKEN}` };
const PROBING = { adminToken: ADMIN_TOKEN, probeIntervalMs: 100, probeTimeoutMs: 300 };

const serverIs = (name: string, health: string) => (e: FeedEvent) =>
  e.event === "health" && (e.data as HealthView).servers.some((s) => s.name === name && s.health === health);

Deno.test("the feed reports a stopped server as down, and up again when it is back", async () => {
  await using s = await Scenario.start([{ name: "a" }, { name: "b" }], { config: PROBING, probe: true });
  const feed = await FeedReader.open(s.gw.url, AUTH);
  try {
    await feed.next(serverIs("b", "up"), PATIENCE_MS);
    await s.fake("b").pause();
    const down = await feed.next(serverIs("b", "down"), PATIENCE_MS);
    const a = (down.data as HealthView).servers.find((x) => x.name === "a")!;
    assert.equal(a.health, "up", "the other server is untouched");
    assert.ok((down.data as HealthView).servers.find((x) => x.name === "b")!.lastProbeError);
    await s.fake("b").resume();
    await feed.next(serverIs("b", "up"), PATIENCE_MS);
  } finally {
    feed.close();
  }
});

Deno.test("the feed shows a request in flight and then in usage, per key and per user", async () => {
  await using s = await Scenario.start([{ name: "a" }], { config: { adminToken: ADMIN_TOKEN } });
  await s.gw.catalog.users.add({ name: "alice" });
  const secret = await s.gw.key({ name: "docs team", user: "alice" });
  const feed = await FeedReader.open(s.gw.url, AUTH);
  try {
    // An answer far larger than the socket buffers between backend, gateway and client: the gateway reads the
    // backend only as fast as the client reads, so the request stays in flight until the test reads it.
    const word = "x".repeat(64 * 1024);
    s.fake().reply = () => ({ content: Array.from({ length: 1000 }, () => word).join(" ") });
    const body = { model: "x", messages: USER_HELLO, stream: true, stream_options: { include_usage: true } };
    const response = await s.gw.post("/v1/chat/completions", secret, body);
    await feed.next(
      (e) => e.event === "health" && (e.data as HealthView).servers[0].inFlight === 1,
      PATIENCE_MS,
    );
    assert.equal(s.fake().streamsCompleted, 0, "the backend is still held by the unread answer");
    const chunks = (await response.text()).split("\n\n").filter((l) => l.startsWith("data: {"));
    const answer = JSON.parse(chunks.at(-1)!.slice(6));
    assert.equal(answer.usage.completion_tokens, 1000);
    await feed.next(
      (e) => e.event === "health" && (e.data as HealthView).servers[0].inFlight === 0,
      PATIENCE_MS,
    );

    // A fresh feed starts with the current usage: the first one may have sent it while the health events above
    // were being waited for, and sends usage again only when it changes.
    const later = await FeedReader.open(s.gw.url, AUTH);
    let usage: UsageView;
    try {
      usage = (await later.next((e) =>
        e.event === "usage" && (e.data as UsageView).keys.length > 0, PATIENCE_MS))
        .data as UsageView;
    } finally {
      later.close();
    }
    const row = usage.keys[0];
    assert.match(row.label, /^docs team \(gwk_[^)]+\)$/);
    assert.equal(row.user, "alice");
    for (const period of ["day", "week", "month"] as const) {
      assert.equal(row[period].requests, 1);
      assert.equal(row[period].promptTokens, answer.usage.prompt_tokens);
      assert.equal(row[period].completionTokens, answer.usage.completion_tokens);
    }
    assert.deepEqual(usage.users.map((u) => [u.label, u.day.requests]), [["alice", 1]]);
    assert.equal(usage.totals.day.requests, 1);
    assert.deepEqual(usage.recent, []);
  } finally {
    feed.close();
  }
});

Deno.test("a broken stream appears among the recent partial requests", async () => {
  await using s = await Scenario.start([{ name: "a" }], { config: { adminToken: ADMIN_TOKEN } });
  const secret = await s.gw.key();
  s.fake().streamFault = { after: 1, kind: "crash" };
  const r = await s.gw.post("/v1/chat.php", secret, { model: "x", messages: USER_HELLO, stream: true });
  await r.text();
  await s.gw.ledger.flush();
  const status = await (await fetch(`${s.gw.url}/admin/status`, { headers: AUTH })).json();
  const usage = status.usage as UsageView;
  assert.equal(usage.recent.length, 1);
  assert.equal(usage.recent[0].status, "partial");
  assert.equal(usage.recent[0].server, "a");
  assert.equal(usage.recent[0].format, "ollama");
  assert.equal(usage.keys[0].day.failed, 1);
});

type Family = {
  name: string;
  type: string;
  metrics: {
    labels?: Record<string, string>;
    value?: string;
    buckets?: Record<string, string>;
    count?: string;
  }[];
};

Deno.test("/metrics is Prometheus text counting requests, tokens, latency, refusals and breakers", async () => {
  await using s = await Scenario.start([{ name: "a" }], { config: { adminToken: ADMIN_TOKEN } });
  const secret = await s.gw.key({ rpm: 2 });
  const statuses: number[] = [];
  for (let i = 0; i < 3; i++) {
    const r = await s.gw.post(i % 2 ? "/v1/chat.php" : "/v1/chat/completions", secret, {
      model: "x",
      messages: USER_HELLO,
    });
    statuses.push(r.status);
    await r.body?.cancel();
  }
  assert.deepEqual(statuses, [200, 200, 429]);
  const response = await fetch(`${s.gw.url}/metrics`, { headers: AUTH });
  assert.equal(response.status, 200);
  assert.match(response.headers.get("content-type") ?? "", /^text\/plain; version=0\.0\.4/);
  const text = await response.text();
  // The parser throws on any line that is not valid exposition format; that is the check that matters.
  const families = parsePrometheusTextFormat(text) as Family[];
  const family = (name: string) => {
    const found = families.find((f) => f.name === name);
    assert.ok(found, `missing ${name}`);
    return found;
  };
  const value = (name: string, labels: Record<string, string>) =>
    Number(
      family(name).metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v))?.value,
    );

  assert.equal(family("gateway_requests_total").type, "COUNTER");
  assert.equal(value("gateway_requests_total", { format: "openai", status: "200", outcome: "ok" }), 1);
  assert.equal(value("gateway_requests_total", { format: "ollama", status: "200", outcome: "ok" }), 1);
  assert.equal(value("gateway_requests_total", { format: "openai", status: "429", outcome: "rejected" }), 1);
  assert.equal(value("gateway_limit_refusals_total", { reason: "rate_limited" }), 1);
  const billed = s.gw.usage.reduce((n, r) => n + r.completionTokens, 0);
  assert.ok(billed > 0);
  assert.equal(
    value("gateway_tokens_total", { format: "openai", type: "completion" }) +
      value("gateway_tokens_total", { format: "ollama", type: "completion" }),
    billed,
  );
  const latency = family("gateway_request_duration_seconds");
  assert.equal(latency.type, "HISTOGRAM");
  // The parser folds labelled histograms into one series, so their counts are read from the text itself.
  const counts = [...text.matchAll(/^gateway_request_duration_seconds_count\{[^}]*\} (\d+)$/gm)];
  assert.equal(counts.reduce((n, m) => n + Number(m[1]), 0), 2, "refusals are not latency samples");
  assert.equal(family("gateway_time_to_first_byte_seconds").type, "HISTOGRAM");
  assert.equal(value("gateway_breaker_state", { server: "a", state: "closed" }), 1);
  assert.equal(value("gateway_breaker_state", { server: "a", state: "open" }), 0);
  assert.equal(value("gateway_server_in_flight", { server: "a" }), 0);
  assert.ok(value("gateway_resident_memory_bytes", {}) > 1e6);
});
