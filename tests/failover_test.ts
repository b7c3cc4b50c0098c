import assert from "node:assert/strict";
// @ts-types="@types/seedrandom"
import seedrandom from "seedrandom";
import { Scenario, USER_HELLO } from "./harness.ts";

const A = "/v1/chat/completions";
const B = "/v1/chat.php";
/** Draws that always put the first registered server first (ties broken by weight order). */
const firstFirst = () => 0.5;

Deno.test("fails over to the next server on 5xx, busy, missing model, connection refused and timeout", async () => {
  await using s = await Scenario.start(
    [{ name: "bad", weight: 100 }, { name: "good", weight: 1 }],
    { random: firstFirst, config: { firstByteTimeoutMs: 300 } },
  );
  const key = await s.gw.key();
  for (const mode of ["error", "busy", "not-found", "hang"] as const) {
    s.fake("bad").mode = mode;
    const res = await s.gw.post(A, key, { messages: USER_HELLO });
    assert.equal(res.status, 200, mode);
    assert.equal((await res.json()).choices[0].message.content, "Hello from good", mode);
  }
  await s.fake("bad").close();
  s.fakes.delete("bad");
  const res = await s.gw.post(B, key, { messages: USER_HELLO });
  assert.equal(res.status, 200);
  assert.equal((await res.json()).message.content, "Hello from good");
});

Deno.test("a request the backend refuses as invalid is not retried elsewhere", async () => {
  await using s = await Scenario.start([{ name: "a", weight: 100 }, { name: "b" }], { random: firstFirst });
  const key = await s.gw.key();
  s.fake("a").mode = "reject";
  const res = await s.gw.post(A, key, { messages: USER_HELLO });
  assert.equal(res.status, 400);
  assert.match((await res.json()).error.message, /does not support thinking/);
  assert.equal(s.fake("b").chats.length, 0);
});

Deno.test("502 when every server answers garbage or a malformed response", async () => {
  await using s = await Scenario.start([{ name: "a" }, { name: "b" }]);
  const key = await s.gw.key();
  s.fake("a").mode = "garbage";
  s.fake("b").mode = "malformed";
  for (const [path, type] of [[A, "api_error"], [B, "proxy_error"]]) {
    const res = await s.gw.post(path, key, { messages: USER_HELLO });
    assert.equal(res.status, 502);
    const body = await res.json();
    assert.equal(body.error.type, type);
    assert.equal(body.error.code, "bad_gateway");
  }
  assert.equal(s.fake("a").chats.length, 2);
  assert.equal(s.fake("b").chats.length, 2);
});

Deno.test("503 with a reason and no backend address when nothing can serve", async () => {
  await using s = await Scenario.start([{ name: "a" }, { name: "b" }]);
  s.fake("a").mode = "error";
  s.fake("b").mode = "busy";
  const key = await s.gw.key();
  const res = await s.gw.post(A, key, { messages: USER_HELLO });
  assert.equal(res.status, 503);
  const { error } = await res.json();
  assert.equal(error.code, "no_healthy_server");
  assert.match(error.message, /All 2 server\(s\) for model "m1" failed/);
  assert.doesNotMatch(error.message, /127\.0\.0\.1|10\.0\.0\.9|http/);

  const orphan = await s.gw.key({ model: "not-served" });
  const none = await s.gw.post(B, orphan, { messages: USER_HELLO });
  assert.equal(none.status, 503);
  assert.match((await none.json()).error.message, /No server is available for model "not-served"/);
});

Deno.test("disabled servers, servers without the model and servers outside the key's cluster are never used", async () => {
  await using s = await Scenario.start([
    { name: "off", enabled: false },
    { name: "other", models: [{ tag: "m2" }] },
    { name: "in", models: [{ tag: "m1" }, { tag: "m2" }] },
    { name: "out" },
  ]);
  await s.gw.catalog.clusters.add({ name: "team", servers: ["in", "off"] });
  await s.gw.deps.view.refresh();
  const clustered = await s.gw.key({ cluster: "team" });
  for (let i = 0; i < 20; i++) {
    assert.equal((await s.gw.post(A, clustered, { messages: USER_HELLO })).status, 200);
  }
  assert.equal(s.fake("in").chats.length, 20);
  const free = await s.gw.key();
  for (let i = 0; i < 30; i++) assert.equal((await s.gw.post(A, free, { messages: USER_HELLO })).status, 200);
  assert.equal(s.fake("off").chats.length, 0);
  assert.equal(s.fake("other").chats.length, 0);
  assert.ok(s.fake("out").chats.length > 0 && s.fake("in").chats.length > 20, "unclustered keys use both");
});

Deno.test("weights steer traffic through the pipeline", async () => {
  await using s = await Scenario.start([{ name: "heavy", weight: 3 }, { name: "light", weight: 1 }], {
    random: seedrandom("pipeline-weights"),
  });
  const key = await s.gw.key();
  for (let i = 0; i < 200; i++) await s.gw.post(A, key, { messages: USER_HELLO });
  const heavy = s.fake("heavy").chats.length;
  assert.equal(heavy + s.fake("light").chats.length, 200);
  // Expected 150 (sd ≈ 6.1); the seed makes the count exact, the bound says what it means.
  assert.ok(heavy > 131 && heavy < 169, `heavy got ${heavy}`);
});

Deno.test("a server whose answer never ends is given up at GATEWAY_MAX_ANSWER_BYTES and the next one answers", async () => {
  await using s = await Scenario.start(
    [{ name: "flood", weight: 100 }, { name: "good", weight: 1 }],
    { random: firstFirst, config: { maxAnswerBytes: 300_000 } },
  );
  const key = await s.gw.key();
  s.fake("flood").mode = "flood";
  const whole = await s.gw.post(A, key, { messages: USER_HELLO });
  assert.equal(whole.status, 200);
  assert.equal((await whole.json()).choices[0].message.content, "Hello from good");
  const streamed = await s.gw.post(B, key, { messages: USER_HELLO, stream: true });
  assert.equal(streamed.status, 200);
  assert.match(await streamed.text(), /"content":"good"/);
  assert.equal(s.fake("flood").chats.length, 2, "the flooding server was tried first both times");

  // With nowhere else to go, the client gets the format's 502.
  await s.fake("good").close();
  s.fakes.delete("good");
  const alone = await s.gw.post(A, key, { messages: USER_HELLO });
  assert.equal(alone.status, 502);
  assert.match((await alone.json()).error.message, /answered with an invalid response/);
});
