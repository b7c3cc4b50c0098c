/**
 * Routing under faults, through the real gateway: the circuit breaker (injected clock), health probes taking a
 * dead server out and bringing it back, model discovery, and the live state the admin page will show.
 */
import assert from "node:assert/strict";
import { Scenario, USER_HELLO } from "./harness.ts";
import { eventually } from "./support/wait_for.ts";

const A = "/v1/chat/completions";
const B = "/v1/chat.php";
/** Weighted draws that always put the heavier server first. */
const heavyFirst = () => 0.5;

async function ask(s: Scenario, key: string, path = A) {
  const res = await s.gw.post(path, key, { messages: USER_HELLO });
  const body = await res.json();
  return { status: res.status, body };
}

const stateOf = (s: Scenario, name: string) => s.gw.deps.servers.status().find((st) => st.name === name);

Deno.test("breaker: opens after N failures, skips the server, lets one trial through after T, closes on success", async () => {
  let t = 1_000_000;
  await using s = await Scenario.start([{ name: "flaky", weight: 9 }, { name: "steady" }], {
    random: heavyFirst,
    now: () => t,
    config: { breakerFailures: 3, breakerOpenMs: 10_000 },
  });
  const key = await s.gw.key();
  s.fake("flaky").mode = "error";
  for (let i = 0; i < 3; i++) assert.equal((await ask(s, key)).status, 200, "failover hides each failure");
  assert.equal(s.fake("flaky").chats.length, 3);
  assert.equal(stateOf(s, "flaky")?.breaker, "open");

  for (let i = 0; i < 5; i++) assert.equal((await ask(s, key, B)).status, 200);
  assert.equal(s.fake("flaky").chats.length, 3, "an open breaker is skipped: no more calls");

  t += 9_999;
  await ask(s, key);
  assert.equal(s.fake("flaky").chats.length, 3, "still open just before T");
  t += 1;
  s.fake("flaky").mode = "ok";
  const trial = await ask(s, key);
  assert.equal(
    trial.body.choices[0].message.content,
    "Hello from flaky",
    "the trial went to the recovered server",
  );
  assert.equal(stateOf(s, "flaky")?.breaker, "closed");
  assert.equal((await ask(s, key)).body.choices[0].message.content, "Hello from flaky");
});

Deno.test("breaker: a failed trial opens it again for another T", async () => {
  let t = 5_000_000;
  await using s = await Scenario.start([{ name: "flaky", weight: 9 }, { name: "steady" }], {
    random: heavyFirst,
    now: () => t,
    config: { breakerFailures: 2, breakerOpenMs: 1_000 },
  });
  const key = await s.gw.key();
  s.fake("flaky").mode = "busy";
  await ask(s, key);
  await ask(s, key);
  assert.equal(stateOf(s, "flaky")?.breaker, "open");
  t += 1_000;
  assert.equal((await ask(s, key)).status, 200, "the failed trial still fails over");
  assert.equal(s.fake("flaky").chats.length, 3);
  assert.equal(stateOf(s, "flaky")?.breaker, "open");
  t += 999;
  await ask(s, key);
  assert.equal(s.fake("flaky").chats.length, 3, "the timer restarted at the failed trial");
});

Deno.test("503 says why when every server is out: circuit open, and the client's own faults trip nothing", async () => {
  await using s = await Scenario.start([{ name: "only" }], { config: { breakerFailures: 2 } });
  const key = await s.gw.key();
  // Images a model cannot see are the client's fault too: tests/image_refusal_test.ts.
  s.fake("only").mode = "reject";
  for (let i = 0; i < 3; i++) assert.equal((await ask(s, key)).status, 400);
  assert.equal(stateOf(s, "only")?.breaker, "closed", "bad requests are not the server's fault");

  s.fake("only").mode = "error";
  for (let i = 0; i < 2; i++) assert.equal((await ask(s, key)).status, 503);
  const { status, body } = await ask(s, key);
  assert.equal(status, 503);
  assert.equal(body.error.code, "no_healthy_server");
  assert.match(body.error.message, /All 1 server\(s\) for model "m1" are unavailable: 1 circuit open/);
  assert.doesNotMatch(body.error.message, /127\.0\.0\.1|http:/);
});

Deno.test("health probes take a dead server out and bring it back, without a client seeing an error", async () => {
  await using s = await Scenario.start([{ name: "a", weight: 9 }, { name: "b" }], {
    random: heavyFirst,
    probe: true,
    config: { probeIntervalMs: 100, probeTimeoutMs: 500 },
  });
  const key = await s.gw.key();
  await eventually(
    "first probes",
    () => stateOf(s, "a")?.health === "up" && stateOf(s, "b")?.health === "up",
  );
  assert.deepEqual(stateOf(s, "a")?.models, ["m1"], "models discovered from /api/tags");

  await s.fake("a").pause();
  await eventually("a marked down", () => stateOf(s, "a")?.health === "down");
  assert.match(stateOf(s, "a")?.lastProbeError ?? "", /refused|reach/);
  for (let i = 0; i < 5; i++) {
    const { status, body } = await ask(s, key);
    assert.equal(status, 200);
    assert.equal(body.choices[0].message.content, "Hello from b");
  }

  await s.fake("a").resume();
  await eventually("a back up", () => stateOf(s, "a")?.health === "up");
  await eventually(
    "a serving again",
    async () => (await ask(s, key)).body.choices[0].message.content === "Hello from a",
  );
});

Deno.test("model discovery: a model the admin listed but the server lacks is not routed there", async () => {
  await using s = await Scenario.start([
    { name: "big", weight: 9, models: [{ tag: "m1" }, { tag: "m2" }] },
    { name: "small", models: [{ tag: "m1" }] },
  ], { random: heavyFirst, probe: true, config: { probeIntervalMs: 100 } });
  s.fake("big").models = ["m1:latest"]; // m2 was never pulled there; `m1` and `m1:latest` are one model
  const m1 = await s.gw.key({ model: "m1" });
  const m2 = await s.gw.key({ model: "m2" });
  await eventually("discovery", () => stateOf(s, "big")?.models?.length === 1);
  assert.equal((await ask(s, m1)).body.choices[0].message.content, "Hello from big");
  const missing = await ask(s, m2);
  assert.equal(missing.status, 503);
  assert.match(missing.body.error.message, /unavailable: 1 model not found/);
  assert.equal(s.fake("big").chats.length, 1, "the m2 request never reached big");
});

Deno.test("live state: in-flight, requests and errors of the last minute, latency percentiles", async () => {
  await using s = await Scenario.start([{ name: "a", weight: 9 }, { name: "b" }], { random: heavyFirst });
  const key = await s.gw.key();
  s.fake("a").chunkDelayMs = 100;
  s.fake("a").reply = () => ({ content: "one two three" });
  const streaming = s.gw.post(A, key, { messages: USER_HELLO, stream: true });
  await eventually("a stream in flight", () => stateOf(s, "a")?.inFlight === 1);
  await (await streaming).text();
  assert.equal(stateOf(s, "a")?.inFlight, 0);
  s.fake("a").mode = "error";
  await ask(s, key);
  const a = stateOf(s, "a")!;
  assert.equal(a.requestsLastMinute, 2);
  assert.equal(a.errorsLastMinute, 1);
  assert.equal(typeof a.latencyP50Ms, "number");
  assert.equal(stateOf(s, "b")?.requestsLastMinute, 1);
  assert.equal(JSON.stringify(s.gw.deps.servers.status()).includes("http://"), false, "no URLs in the state");
});
