/**
 * Ollama's own clients, given only the gateway's address and a key (ollama-js and LangChain's ChatOllama,
 * which is built on it): chat, streams, tools, the model list and model details.
 */
import assert from "node:assert/strict";
import { Ollama } from "ollama";
import { ChatOllama } from "@langchain/ollama";
import { tool } from "@langchain/core/tools";
import { Scenario } from "./harness.ts";

const SERVERS = [{ name: "a", models: [{ tag: "llama3.2:3b", alias: "house-model" }] }];

function ollama(url: string, key: string): Ollama {
  return new Ollama({ host: url, headers: { Authorization: `Bearer ${key}` } });
}

Deno.test("ollama-js: chat and a stream on /api/chat, accounted like format B", async () => {
  await using s = await Scenario.start(SERVERS);
  const key = await s.gw.key({ model: "llama3.2:3b" });
  s.fake().reply = () => ({ content: "one two three", promptTokens: 4, completionTokens: 3 });
  const client = ollama(s.gw.url, key);

  const whole = await client.chat({ model: "anything", messages: [{ role: "user", content: "count" }] });
  assert.equal(whole.model, "house-model");
  assert.equal(whole.message.content, "one two three");
  assert.equal(whole.done, true);
  assert.equal(whole.eval_count, 3);
  assert.equal(s.fake().last.model, "llama3.2:3b", "the key's model replaces the client's");

  let text = "";
  let last;
  for await (
    const part of await client.chat({
      model: "x",
      messages: [{ role: "user", content: "count" }],
      stream: true,
    })
  ) {
    text += part.message.content;
    last = part;
  }
  assert.equal(text, "one two three");
  assert.equal(last?.done, true);
  assert.equal(last?.prompt_eval_count, 4);

  assert.deepEqual(
    s.gw.usage.map((r) => [r.format, r.stream, r.status, r.promptTokens, r.completionTokens]),
    [
      ["ollama", false, "ok", 4, 3],
      ["ollama", true, "ok", 4, 3],
    ],
  );
});

Deno.test("ollama-js: list and show name only the key's model, with the servers' details", async () => {
  await using s = await Scenario.start(SERVERS);
  await s.gw.deps.prober!.probeNow();
  const key = await s.gw.key({ model: "llama3.2:3b", vision: true });
  const client = ollama(s.gw.url, key);

  const list = await client.list();
  assert.equal(list.models.length, 1);
  const [entry] = list.models;
  assert.equal(entry.name, "house-model");
  assert.equal(entry.details.family, "llama");
  assert.equal(entry.details.parameter_size, "3.2B");
  assert.equal(entry.details.quantization_level, "Q4_K_M");
  assert.equal(entry.size, 2_019_393_189);
  assert.match(entry.digest, /^[0-9a-f]{64}$/);
  assert.equal(String(entry.modified_at), "2026-01-01T00:00:00Z");

  const shown = await client.show({ model: "house-model" });
  assert.deepEqual(shown.capabilities, ["completion", "vision"]);
  assert.equal(shown.details.family, "llama");
  // The key decides the model, for show as for chat: any name is answered with what a chat would get.
  assert.deepEqual(await client.show({ model: "other-model" }), shown);
  assert.deepEqual(await client.show({ model: "gpt-4o" }), shown);
  const notText = await fetch(`${s.gw.url}/api/show`, {
    method: "POST",
    headers: { Authorization: `Bearer ${key}` },
    body: JSON.stringify({ model: 5 }),
  });
  assert.equal(notText.status, 400);
  assert.deepEqual(await notText.json(), { error: "model must be a string", code: "invalid_request" });

  assert.match((await client.version()).version, /^\d+\.\d+\.\d+$/);
  const missing = new Ollama({ host: s.gw.url });
  await assert.rejects(missing.list(), (e: Error & { status_code?: number }) => {
    assert.equal(e.status_code, 401);
    assert.match(e.message, /API key/, "Ollama clients read the error as text, not [object Object]");
    return true;
  });
});

Deno.test("ollama-js: ps lists the key's model while some server holds it loaded, and nothing else", async () => {
  await using s = await Scenario.start([
    ...SERVERS,
    { name: "gpu-secret-b", models: [{ tag: "qwen3:8b" }] },
  ]);
  // The other server holds another model loaded; the key's model is loaded nowhere yet.
  s.fake("gpu-secret-b").loaded = ["qwen3:8b"];
  await s.gw.deps.prober!.probeNow();
  const key = await s.gw.key({ model: "llama3.2:3b", defaultCtx: 8192 });
  const client = ollama(s.gw.url, key);
  assert.deepEqual(await client.ps(), { models: [] });

  // Once a chat went there, it is loaded: the routing's picture, not a call to the server.
  await client.chat({ model: "anything", messages: [{ role: "user", content: "hi" }] });
  const psHits = s.fake().hits.get("/api/ps");
  const running = await client.ps();
  assert.equal(s.fake().hits.get("/api/ps"), psHits, "ps asks no server");
  assert.equal(running.models.length, 1);
  const [entry] = running.models;
  assert.equal(entry.name, "house-model");
  assert.equal(entry.model, "house-model");
  assert.equal(entry.size, 2_019_393_189);
  assert.match(entry.digest, /^[0-9a-f]{64}$/);
  assert.equal(entry.details.family, "llama");
  assert.equal(entry.details.quantization_level, "Q4_K_M");
  // What only a server knows is not passed on: Ollama's zero values, which strict clients still parse.
  assert.equal(String(entry.expires_at), "0001-01-01T00:00:00Z");
  assert.equal(entry.size_vram, 0);
  assert.equal((entry as unknown as { context_length: number }).context_length, 8192);
  const raw = JSON.stringify(running);
  assert.ok(!/gpu-secret|127\.0\.0\.1|qwen3/.test(raw), raw);

  // The server says it unloaded the model: the next probe corrects the picture.
  s.fake().loaded = [];
  await s.gw.deps.prober!.probeNow();
  assert.deepEqual(await client.ps(), { models: [] });

  // A key bound to the other model sees that one, loaded, and not the first.
  const other = ollama(s.gw.url, await s.gw.key({ model: "qwen3:8b" }));
  assert.deepEqual((await other.ps()).models.map((m) => m.name), ["qwen3:8b"]);

  await assert.rejects(new Ollama({ host: s.gw.url }).ps(), (e: Error & { status_code?: number }) => {
    assert.equal(e.status_code, 401);
    assert.match(e.message, /API key/);
    return true;
  });
});

Deno.test("ollama-js: ps does not count a loaded model on a server that is down", async () => {
  await using s = await Scenario.start(SERVERS);
  s.fake().loaded = ["llama3.2:3b"];
  await s.gw.deps.prober!.probeNow();
  const client = ollama(s.gw.url, await s.gw.key({ model: "llama3.2:3b" }));
  assert.deepEqual((await client.ps()).models.map((m) => m.name), ["house-model"]);

  s.fake().probeFault = "error";
  await s.gw.deps.prober!.probeNow();
  assert.deepEqual(await client.ps(), { models: [] });
});

Deno.test("LangChain ChatOllama: invoke, stream, and tools on a key that allows them", async () => {
  await using s = await Scenario.start(SERVERS);
  const key = await s.gw.key({ model: "llama3.2:3b", tools: true });
  const chat = new ChatOllama({
    baseUrl: s.gw.url,
    model: "house-model",
    headers: { Authorization: `Bearer ${key}` },
    maxRetries: 0,
  });

  s.fake().reply = () => ({ content: "Paris is the capital." });
  const answer = await chat.invoke("What is the capital of France?");
  assert.equal(answer.content, "Paris is the capital.");

  let streamed = "";
  for await (const chunk of await chat.stream("Again?")) streamed += chunk.content;
  assert.equal(streamed, "Paris is the capital.");

  s.fake().reply = () => ({
    toolCalls: [{ id: "call_w1", name: "get_weather", arguments: { city: "Oslo" } }],
  });
  const weather = tool(() => "3 °C", {
    name: "get_weather",
    description: "Weather in a city",
    schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  });
  const called = await chat.bindTools([weather]).invoke("Weather in Oslo?");
  assert.equal(called.tool_calls?.length, 1);
  assert.equal(called.tool_calls?.[0].name, "get_weather");
  assert.deepEqual(called.tool_calls?.[0].args, { city: "Oslo" });
  const sent = s.fake().last.tools as { function: { name: string } }[];
  assert.equal(sent[0].function.name, "get_weather", "the tools reached the backend");
});
