/**
 * Model discovery: each key sees exactly its one model, under the name its format uses; discovery needs an
 * admitted key and spends no rate-limit slot. That every discovery path answers in its format, refuses a
 * missing key and names no server, address or other model is tests/public_paths_test.ts.
 */
import assert from "node:assert/strict";
import OpenAI from "openai";
import { Scenario } from "./harness.ts";
import { openaiClient } from "./support/clients.ts";

const SERVERS = [
  { name: "gpu-secret-1", models: [{ tag: "llama3.2:3b", alias: "house-model" }, { tag: "qwen3:8b" }] },
  { name: "gpu-secret-2", models: [{ tag: "phi4:14b" }] },
];

Deno.test("openai SDK: models.list and models.retrieve show the key's one model", async () => {
  await using s = await Scenario.start(SERVERS);
  const key = await s.gw.key({ model: "llama3.2:3b" });
  for (const base of ["/v1", "/api/v1"] as const) {
    const client = openaiClient(s.gw.url, key, base);
    const models = [];
    for await (const m of client.models.list()) models.push(m);
    assert.deepEqual(models.map((m) => [m.id, m.object, m.owned_by]), [["llama3.2:3b", "model", "gateway"]]);
    assert.ok(Number.isInteger(models[0].created));

    const one = await client.models.retrieve("llama3.2:3b");
    assert.equal(one.id, "llama3.2:3b");
    assert.equal(one.object, "model");
    await assert.rejects(
      client.models.retrieve("qwen3:8b"),
      (e: unknown) => e instanceof OpenAI.NotFoundError && /qwen3:8b/.test(e.message),
      "another model on the same server is not the key's",
    );
  }
  const other = await s.gw.key({ model: "phi4:14b" });
  const ids = (await openaiClient(s.gw.url, other).models.list()).data.map((m) => m.id);
  assert.deepEqual(ids, ["phi4:14b"]);
});

Deno.test("a model id with slashes is found encoded (as the SDK sends it) or raw", async () => {
  const tag = "meta-llama/Llama-3.1-8B";
  await using s = await Scenario.start([{ name: "vllm", kind: "openai", models: [{ tag }] }]);
  const key = await s.gw.key({ model: tag });
  assert.equal((await openaiClient(s.gw.url, key).models.retrieve(tag)).id, tag);
  const raw = await fetch(`${s.gw.url}/v1/models/${tag}`, { headers: { Authorization: `Bearer ${key}` } });
  assert.equal((await raw.json()).id, tag);
});

Deno.test("/api/show capabilities follow the key's tools, vision and thinking toggles", async () => {
  await using s = await Scenario.start(SERVERS);
  const cases = [
    [{}, ["completion"]],
    [{ tools: true }, ["completion", "tools"]],
    [{ vision: true, thinking: true }, ["completion", "vision", "thinking"]],
    [{ tools: true, vision: true, thinking: true }, ["completion", "tools", "vision", "thinking"]],
  ] as const;
  for (const [toggles, expected] of cases) {
    const key = await s.gw.key({ model: "llama3.2:3b", ...toggles });
    const res = await s.gw.post("/api/show", key, { model: "house-model" });
    assert.equal(res.status, 200);
    assert.deepEqual((await res.json()).capabilities, expected, JSON.stringify(toggles));
  }
});

Deno.test("discovery needs an admitted key, unexpired and from an allowed address, but spends no rate-limit slot and leaves no usage record", async () => {
  await using s = await Scenario.start(SERVERS);
  const key = await s.gw.key({ model: "llama3.2:3b", rpm: 1 });
  const auth = { Authorization: `Bearer ${key}` };
  for (let i = 0; i < 5; i++) {
    assert.equal((await fetch(`${s.gw.url}/v1/models`, { headers: auth }).then(drain)).status, 200);
    assert.equal((await fetch(`${s.gw.url}/api/tags`, { headers: auth }).then(drain)).status, 200);
  }
  assert.equal(s.gw.usage.length, 0);
  const chat = await s.gw.post("/v1/chat/completions", key, {
    model: "x",
    messages: [{ role: "user", content: "hi" }],
  });
  assert.equal(chat.status, 200, "the minute's one request is still there");
  await chat.body?.cancel();

  const expired = await s.gw.key({ model: "llama3.2:3b", expiresAt: "2020-01-01T00:00:00.000Z" });
  const refused = await fetch(`${s.gw.url}/api/tags`, { headers: { Authorization: `Bearer ${expired}` } });
  assert.equal(refused.status, 403);
  assert.match((await refused.json()).error, /expired/);
  const walled = await s.gw.key({ model: "llama3.2:3b", allowIps: ["10.0.0.0/8"] });
  const outside = await fetch(`${s.gw.url}/v1/models`, { headers: { Authorization: `Bearer ${walled}` } });
  assert.equal(outside.status, 403);
  assert.equal((await outside.json()).error.type, "permission_error");
});

async function drain(res: Response): Promise<Response> {
  await res.body?.cancel();
  return res;
}
