import assert from "node:assert/strict";
import OpenAI from "openai";
import { Scenario } from "./harness.ts";
import { ollamaClient, openaiClient } from "./support/clients.ts";

Deno.test("openai SDK: chat.completions.create on both base URLs", async () => {
  await using s = await Scenario.start();
  const key = await s.gw.key();
  s.fake().reply = () => ({ content: "Hi!", promptTokens: 11, completionTokens: 2 });
  for (const base of ["/v1", "/api/v1"] as const) {
    const done = await openaiClient(s.gw.url, key, base).chat.completions.create({
      model: "anything",
      messages: [{ role: "user", content: "Say hi" }],
    });
    assert.match(done.id, /^chatcmpl-\w+$/);
    assert.equal(done.object, "chat.completion");
    assert.equal(typeof done.created, "number");
    assert.ok(Math.abs(done.created - Date.now() / 1000) < 60);
    assert.equal(done.choices[0].message.role, "assistant");
    assert.equal(done.choices[0].message.content, "Hi!");
    assert.equal(done.choices[0].finish_reason, "stop");
    assert.deepEqual(done.usage, { prompt_tokens: 11, completion_tokens: 2, total_tokens: 13 });
  }
});

Deno.test("openai SDK: tool calls come back with ids, JSON-string arguments and finish_reason tool_calls", async () => {
  await using s = await Scenario.start();
  const key = await s.gw.key({ tools: true, thinking: true });
  s.fake().reply = () => ({
    thinking: "Need the weather tool.",
    toolCalls: [{ name: "get_weather", arguments: { city: "Oslo" } }, {
      id: "call_fixed1",
      name: "get_time",
      arguments: {},
    }],
  });
  const done = await openaiClient(s.gw.url, key, "/v1").chat.completions.create({
    model: "x",
    messages: [{ role: "user", content: "Weather in Oslo?" }],
    tools: [{ type: "function", function: { name: "get_weather", parameters: { type: "object" } } }],
    reasoning_effort: "low",
  });
  const choice = done.choices[0];
  assert.equal(choice.finish_reason, "tool_calls");
  const calls = choice.message.tool_calls!;
  assert.equal(calls.length, 2);
  assert.match(calls[0].id, /^call_\w+$/);
  assert.equal(calls[1].id, "call_fixed1");
  assert.equal(calls[0].type, "function");
  const fn = (calls[0] as { function: { name: string; arguments: string } }).function;
  assert.equal(fn.name, "get_weather");
  assert.deepEqual(JSON.parse(fn.arguments), { city: "Oslo" });
  assert.equal(
    (choice.message as unknown as { reasoning_content: string }).reasoning_content,
    "Need the weather tool.",
  );
});

Deno.test("openai SDK: gateway errors surface as APIError with status and message", async () => {
  await using s = await Scenario.start();
  const bad = openaiClient(s.gw.url, "gwk_wrong", "/v1");
  await assert.rejects(
    bad.chat.completions.create({ model: "x", messages: [{ role: "user", content: "hi" }] }),
    (e: unknown) => e instanceof OpenAI.AuthenticationError && e.status === 401 && /API key/.test(e.message),
  );
  const key = await s.gw.key();
  await assert.rejects(
    openaiClient(s.gw.url, key, "/v1").chat.completions.create({ model: "x", messages: [] }),
    (e: unknown) =>
      e instanceof OpenAI.BadRequestError && /"messages" must be a non-empty array/.test(e.message),
  );
});

Deno.test("ollama client: chat on both format-B paths, with the server's alias as model", async () => {
  await using s = await Scenario.start([{
    name: "a",
    models: [{ tag: "llama3.2:3b", alias: "house-model" }],
  }]);
  const key = await s.gw.key({ model: "llama3.2:3b", thinking: true });
  s.fake().reply = () => ({
    content: "Bonjour",
    thinking: "French it is",
    promptTokens: 5,
    completionTokens: 1,
  });
  for (const path of ["/v1/chat.php", "/api/v1/chat.php"] as const) {
    const res = await ollamaClient(s.gw.url, key, path).chat({
      model: "whatever",
      messages: [{ role: "user", content: "Say hello in French" }],
      think: true,
      options: { temperature: 0.3 },
    });
    assert.equal(res.model, "house-model");
    assert.equal(res.message.role, "assistant");
    assert.equal(res.message.content, "Bonjour");
    assert.equal(res.message.thinking, "French it is");
    assert.equal(res.done, true);
    assert.equal(res.prompt_eval_count, 5);
    assert.equal(res.eval_count, 1);
    assert.ok(Number.isInteger(res.total_duration) && res.total_duration > 0);
    assert.ok(!Number.isNaN(Date.parse(String(res.created_at))));
    assert.equal(s.fake().last.model, "llama3.2:3b");
    assert.deepEqual(s.fake().last.options, { temperature: 0.3 });
  }
});

Deno.test("ollama client: tool calls arrive with object arguments", async () => {
  await using s = await Scenario.start();
  const key = await s.gw.key({ tools: true });
  s.fake().reply = () => ({ toolCalls: [{ id: "call_a", name: "lookup", arguments: { q: "deno" } }] });
  const res = await ollamaClient(s.gw.url, key, "/v1/chat.php").chat({
    model: "x",
    messages: [{ role: "user", content: "search" }],
    tools: [{
      type: "function",
      function: { name: "lookup", parameters: { type: "object", properties: {} } },
    }],
  });
  assert.equal(res.done_reason, "stop");
  assert.equal(res.message.tool_calls?.[0].function.name, "lookup");
  assert.deepEqual(res.message.tool_calls?.[0].function.arguments, { q: "deno" });
});

Deno.test("ollama client: errors throw ResponseError with the status", async () => {
  await using s = await Scenario.start();
  await assert.rejects(
    ollamaClient(s.gw.url, "gwk_wrong", "/v1/chat.php").chat({
      model: "x",
      messages: [{ role: "user", content: "x" }],
    }),
    (e: unknown) => (e as { status_code?: number }).status_code === 401,
  );
});
