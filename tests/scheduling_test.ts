/**
 * Scheduling through the real gateway, in front of fake LLM servers that load models, run a few requests at
 * once and keep a prefix cache: loaded models are preferred over weight, slots are never exceeded (the rest
 * wait at the gateway), conversations return to their server while it has room, and the wait queue answers
 * a full queue, a timed-out wait and a client that leaves as the issue says (injected clock where time
 * matters).
 */
import assert from "node:assert/strict";
import { LlmFleet } from "./support/llm_fleet.ts";
import { eventually } from "./support/wait_for.ts";
import { TestGateway } from "./harness.ts";
import { FakeLlmVllm } from "./fakes/fake_llm.ts";

const A = "/v1/chat/completions";
const B = "/v1/chat.php";

const ask = (content: string) => ({ messages: [{ role: "user", content }] });
const chatsOf = (f: LlmFleet, name: string) => [...f.fake(name).chats.values()].reduce((a, b) => a + b, 0);

Deno.test("scheduling: the server holding the model loaded wins over a heavier one that would have to load it", async () => {
  await using f = await LlmFleet.start([
    { name: "cold", models: ["m1", "m2"], preloaded: ["m2"], modelMemory: 1, weight: 100 },
    { name: "warm", models: ["m1", "m2"], preloaded: ["m1"], modelMemory: 1, weight: 1 },
  ]);
  await f.gw.deps.prober!.probeNow();
  const key = await f.gw.key();
  for (let i = 0; i < 6; i++) {
    const res = await f.gw.post(A, key, ask(`question ${i}`));
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("x-gateway-route"), "loaded");
    await res.body?.cancel();
  }
  assert.equal(chatsOf(f, "warm"), 6);
  assert.equal(chatsOf(f, "cold"), 0, "weight 100 did not pull a request onto a server without the model");
  assert.equal(f.fake("warm").engine.stats.loads + f.fake("cold").engine.stats.loads, 0);
});

Deno.test("scheduling: a server never runs more than its slots; the rest wait at the gateway and all are answered", async () => {
  await using f = await LlmFleet.start([{ name: "a", slots: 2 }, { name: "b", slots: 2 }]);
  const key = await f.gw.key();
  f.hold();
  const asks = Array.from({ length: 9 }, (_, i) => f.gw.post(i % 2 ? B : A, key, ask(`q${i}`)));
  await eventually(
    "4 running and 5 waiting",
    () => f.running("a") + f.running("b") === 4 && f.queued() === 5,
  );
  assert.equal(f.running("a"), 2);
  assert.equal(f.running("b"), 2);
  f.release();
  for (const res of await Promise.all(asks)) {
    assert.equal(res.status, 200);
    await res.body?.cancel();
  }
  assert.equal(chatsOf(f, "a") + chatsOf(f, "b"), 9);
  assert.equal(f.fake("a").engine.stats.peakHeld, 2, "nothing ever queued inside a server");
  assert.equal(f.fake("b").engine.stats.peakHeld, 2);
  assert.equal(f.queued(), 0);
});

Deno.test("scheduling: a conversation's next turn returns to its server while it has room, not when it is full or the affinity expired", async () => {
  let t = 1_000_000;
  await using f = await LlmFleet.start([{ name: "a", slots: 1 }, { name: "b", slots: 1 }], {
    now: () => t,
    config: { affinityTtlMs: 60_000 },
  });
  const key = await f.gw.key();
  const turn1 = [{ role: "user", content: "tell me about tides" }];
  const first = await (await f.gw.post(A, key, { messages: turn1 })).json();
  const home = chatsOf(f, "a") ? "a" : "b";
  const away = home === "a" ? "b" : "a";
  const answer1 = { role: "assistant", content: first.choices[0].message.content };

  const turn2 = [...turn1, answer1, { role: "user", content: "and the moon?" }];
  const second = await f.gw.post(A, key, { messages: turn2 });
  assert.equal(second.headers.get("x-gateway-route"), "affinity");
  const answer2 = { role: "assistant", content: (await second.json()).choices[0].message.content };
  assert.equal(chatsOf(f, home), 2);
  assert.ok(f.fake(home).engine.stats.cachedTokens > 0, "the second turn found its prefix in the cache");

  // Another branch of the same conversation takes the home server's only slot and stays there.
  const { promise: gate, resolve: open } = Promise.withResolvers<void>();
  f.fake(home).engine.gate = gate;
  const blocker = f.gw.post(A, key, { messages: [...turn1, answer1, { role: "user", content: "waves?" }] });
  await eventually("the home server busy", () => f.running(home) === 1);
  const third = await f.gw.post(A, key, { messages: [...turn2, answer2, { role: "user", content: "sun?" }] });
  assert.equal(third.status, 200);
  assert.notEqual(third.headers.get("x-gateway-route"), "affinity");
  await third.body?.cancel();
  assert.equal(chatsOf(f, away), 1, "a full home server lets the conversation go elsewhere at once");
  f.fake(home).engine.gate = undefined;
  open();
  await (await blocker).body?.cancel();

  t += 60_001;
  const late = await f.gw.post(A, key, {
    messages: [...turn2, answer2, { role: "user", content: "stars?" }],
  });
  assert.notEqual(late.headers.get("x-gateway-route"), "affinity", "the affinity expired");
  await late.body?.cancel();
});

Deno.test("scheduling: a full queue answers 429 at once and a wait that times out 503, both with Retry-After, in the client's format, in the ledger and metrics", async () => {
  let t = 2_000_000;
  await using f = await LlmFleet.start([{ name: "only", slots: 1 }], {
    now: () => t,
    config: { queueMax: 1, queueWaitMs: 10_000, adminToken: "scheduling-admin-secret" },
  });
  const key = await f.gw.key();
  f.hold();
  const running = f.gw.post(A, key, ask("first"));
  await eventually("the only slot taken", () => f.running("only") === 1);
  const waiting = f.gw.post(B, key, ask("second"));
  await eventually("one waiting", () => f.queued() === 1);
  assert.match((await f.gw.deps.metrics!.scrape()).body, /gateway_queue_depth\{model="m1"\} 1/);
  const bearer = { Authorization: "Bearer scheduling-admin-secret" };
  const admin = await fetch(`${f.gw.url}/admin/status`, { headers: bearer });
  assert.deepEqual((await admin.json()).health.queues, [{ model: "m1", depth: 1, oldestWaitMs: 0 }]);
  const page = await (await fetch(`${f.gw.url}/admin`, { headers: bearer })).text();
  assert.match(page, /<tr data-model="m1"><td>m1<\/td><td class="num queue-depth">1<\/td>/);

  const full = await f.gw.post(A, key, ask("third"));
  assert.equal(full.status, 429);
  assert.equal(full.headers.get("retry-after"), "3");
  assert.equal((await full.json()).error.code, "queue_full");

  t += 10_000;
  const timedOut = await waiting;
  assert.equal(timedOut.status, 503);
  assert.equal(timedOut.headers.get("retry-after"), "3");
  const body = await timedOut.json();
  assert.equal(body.error.type, "proxy_error", "format B's error body");
  assert.equal(body.error.code, "queue_timeout");

  const records = f.gw.usage.filter((r) => r.errorCode?.startsWith("queue_"));
  assert.deepEqual(records.map((r) => [r.status, r.httpStatus, r.errorCode]), [
    ["rejected", 429, "queue_full"],
    ["error", 503, "queue_timeout"],
  ]);
  const metrics = (await f.gw.deps.metrics!.scrape()).body;
  assert.match(metrics, /gateway_queue_refusals_total\{model="m1",reason="full"\} 1/);
  assert.match(metrics, /gateway_queue_refusals_total\{model="m1",reason="timeout"\} 1/);
  f.release();
  assert.equal((await running).status, 200);
  assert.equal(chatsOf(f, "only"), 1, "refused requests never reached the server");
});

Deno.test("scheduling: a client that leaves while waiting frees its place at once and never reaches a server", async () => {
  await using f = await LlmFleet.start([{ name: "only", slots: 1 }]);
  const key = await f.gw.key();
  f.hold();
  const running = f.gw.post(A, key, ask("first"));
  await eventually("the only slot taken", () => f.running("only") === 1);
  const leaving = new AbortController();
  const left = fetch(`${f.gw.url}${A}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${key}` },
    body: JSON.stringify(ask("never mind")),
    signal: leaving.signal,
  }).catch((e) => e);
  await eventually("one waiting", () => f.queued() === 1);
  leaving.abort();
  await left;
  await eventually("the place freed", () => f.queued() === 0);
  await eventually("the record", () => f.gw.usage.some((r) => r.errorCode === "client_closed"));
  const record = f.gw.usage.find((r) => r.errorCode === "client_closed")!;
  assert.equal(record.httpStatus, 499);
  f.release();
  assert.equal((await running).status, 200);
  assert.equal(chatsOf(f, "only"), 1);
});

Deno.test("scheduling: a vLLM server without --slots is held to the parallelism its /metrics showed", async () => {
  const gw = await TestGateway.start();
  const vllm = FakeLlmVllm.start("vllm", {
    models: ["m1"],
    slots: 1,
    loadMs: 0,
    tokenMs: 0,
    promptMsPerToken: 0,
  });
  try {
    await gw.addServer({ name: "vllm", url: `${vllm.url}/v1`, kind: "openai", models: [{ tag: "m1" }] });
    const key = await gw.key();
    const first = Promise.withResolvers<void>();
    vllm.engine.gate = first.promise;
    // Two requests at once straight to the server: it runs one and makes the other wait, and says so.
    const direct = [1, 2].map(() =>
      fetch(`${vllm.url}/v1/chat/completions`, {
        method: "POST",
        body: JSON.stringify({ model: "m1", messages: [{ role: "user", content: "hi" }], stream: true }),
      })
    );
    await eventually(
      "one running, one waiting",
      () => vllm.engine.running === 1 && vllm.engine.waiting === 1,
    );
    await gw.deps.prober!.probeNow();
    const status = gw.deps.servers.status().find((s) => s.name === "vllm");
    assert.equal(status?.discoveredSlots, 1);
    assert.deepEqual(status?.residentModels, ["m1:latest"], "vLLM keeps its model loaded");
    vllm.engine.gate = undefined;
    first.resolve();
    for (const res of await Promise.all(direct)) await res.body?.cancel();
    await eventually("idle", () => vllm.engine.running === 0);

    const second = Promise.withResolvers<void>();
    vllm.engine.gate = second.promise;
    const asks = [gw.post(A, key, ask("one"))];
    await eventually("the slot taken", () => vllm.engine.running === 1);
    asks.push(gw.post(A, key, ask("two")));
    await eventually("the second waits at the gateway", () => gw.deps.scheduler.figures()[0]?.depth === 1);
    vllm.engine.gate = undefined;
    second.resolve();
    for (const res of await Promise.all(asks)) {
      assert.equal(res.status, 200);
      await res.body?.cancel();
    }
    assert.equal(vllm.engine.stats.peakHeld, 2, "through the gateway, nothing more ever waited inside");
  } finally {
    await gw.close();
    await vllm.close();
  }
});
