/**
 * An OpenAI-compatible backend (a fake vLLM) behind the whole gateway, seen through the official clients of
 * both formats: what clients get must not depend on the backend's kind. Covers the answers themselves on that
 * wire: the bearer key, SSE with a usage chunk, the two names for reasoning, and generation options under
 * vLLM's own names. Tool calls and failures have files of their own.
 */
import assert from "node:assert/strict";
import { USER_HELLO } from "./harness.ts";
import type { ReasoningField } from "./fakes/fake_openai.ts";
import { ollamaClient, openaiClient } from "./support/clients.ts";
import { A, assertUsage, B, BACKEND_KEY, VllmScenario, WEATHER } from "./support/openai_backend.ts";

Deno.test("format A, whole: the answer and the backend's usage; the server's key goes to the backend", async () => {
  await using s = await VllmScenario.start();
  const key = await s.gw.key();
  s.fake.reply = () => ({ content: "Hi from vLLM!", promptTokens: 11, completionTokens: 4 });
  const done = await openaiClient(s.gw.url, key).chat.completions.create({
    model: "whatever-the-client-says",
    messages: [{ role: "user", content: "Say hi" }],
  });
  assert.equal(done.choices[0].message.content, "Hi from vLLM!");
  assert.equal(done.choices[0].finish_reason, "stop");
  assert.deepEqual(done.usage, { prompt_tokens: 11, completion_tokens: 4, total_tokens: 15 });
  const [chat] = s.fake.chats;
  assert.equal(chat.headers.get("authorization"), `Bearer ${BACKEND_KEY}`, "never the client's key");
  assert.equal(chat.body.model, "m1", "the key's model, by the server's tag");
  assert.equal(chat.body.stream, false);
  assert.equal(chat.body.stream_options, undefined, "vLLM refuses stream_options without stream");
  assertUsage(s.gw.usage[0], {
    status: "ok",
    server: "vllm",
    tokenSource: "backend",
    promptTokens: 11,
    completionTokens: 4,
  });
});

Deno.test("format A, streamed with include_usage: the usage chunk carries the backend's counts", async () => {
  await using s = await VllmScenario.start();
  const key = await s.gw.key();
  s.fake.reply = () => ({ content: "one two three", promptTokens: 9, completionTokens: 3 });
  const stream = await openaiClient(s.gw.url, key).chat.completions.create({
    model: "x",
    messages: [{ role: "user", content: "count" }],
    stream: true,
    stream_options: { include_usage: true },
  });
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  assert.equal(chunks[0].choices[0].delta.role, "assistant");
  assert.equal(chunks.map((c) => c.choices[0]?.delta?.content ?? "").join(""), "one two three");
  assert.equal(chunks.at(-2)!.choices[0].finish_reason, "stop");
  assert.deepEqual(chunks.at(-1)!.choices, []);
  assert.deepEqual(chunks.at(-1)!.usage, { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 });
  assert.deepEqual(s.fake.last.stream_options, { include_usage: true });
  assert.equal(s.fake.streamsCompleted, 1);
  assertUsage(s.gw.usage[0], { status: "ok", tokenSource: "backend", promptTokens: 9, completionTokens: 3 });
});

Deno.test("format A, streamed without include_usage: no usage chunk for the client, still billed exactly", async () => {
  await using s = await VllmScenario.start();
  const key = await s.gw.key();
  s.fake.reply = () => ({ content: "alpha beta", promptTokens: 17, completionTokens: 2 });
  const text = await (await s.gw.post(A, key, { messages: USER_HELLO, stream: true })).text();
  assert.ok(text.endsWith("data: [DONE]\n\n"));
  assert.ok(!text.includes('"usage"'), "no usage chunk unless the client asked");
  assert.deepEqual(s.fake.last.stream_options, { include_usage: true }, "the gateway asks for itself");
  assertUsage(s.gw.usage[0], { tokenSource: "backend", promptTokens: 17, completionTokens: 2 });
});

Deno.test("format B through the ollama client, whole and streamed, with the backend's counts", async () => {
  await using s = await VllmScenario.start();
  const key = await s.gw.key();
  s.fake.reply = () => ({ content: "a b c d", promptTokens: 4, completionTokens: 4 });
  const client = ollamaClient(s.gw.url, key, B);
  const whole = await client.chat({ model: "x", messages: USER_HELLO });
  assert.equal(whole.model, "house-model");
  assert.equal(whole.message.content, "a b c d");
  assert.equal(whole.done, true);
  assert.equal(whole.done_reason, "stop");
  assert.equal(whole.prompt_eval_count, 4);
  assert.equal(whole.eval_count, 4);

  const parts = [];
  for await (const part of await client.chat({ model: "x", messages: USER_HELLO, stream: true })) {
    parts.push(part);
  }
  assert.equal(parts.map((p) => p.message.content).join(""), "a b c d");
  assert.ok(parts.length >= 5, "streamed in pieces");
  const last = parts.at(-1)!;
  assert.equal(last.done, true);
  assert.equal(last.prompt_eval_count, 4);
  assert.equal(last.eval_count, 4);
  assert.deepEqual(s.gw.usage.map((r) => [r.status, r.stream, r.tokenSource]), [
    ["ok", false, "backend"],
    ["ok", true, "backend"],
  ]);
});

for (const field of ["reasoning_content", "reasoning"] as ReasoningField[]) {
  Deno.test(`reasoning sent as "${field}" reaches both formats, whole and streamed`, async () => {
    await using s = await VllmScenario.start({ fake: { reasoningField: field } });
    const key = await s.gw.key({ thinking: true });
    s.fake.reply = () => ({ thinking: "Greeting, so greet back.", content: "Hello!" });
    const messages = [{ role: "user" as const, content: "hi" }];

    const whole = await openaiClient(s.gw.url, key).chat.completions.create({ model: "x", messages });
    const message = whole.choices[0].message as unknown as { content: string; reasoning_content?: string };
    assert.equal(message.reasoning_content, "Greeting, so greet back.");
    assert.equal(message.content, "Hello!");

    const stream = await openaiClient(s.gw.url, key).chat.completions.create({
      model: "x",
      messages,
      stream: true,
    });
    let reasoning = "";
    let content = "";
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta as { content?: string; reasoning_content?: string } | undefined;
      reasoning += delta?.reasoning_content ?? "";
      content += delta?.content ?? "";
    }
    assert.equal(reasoning, "Greeting, so greet back.");
    assert.equal(content, "Hello!");

    const b = ollamaClient(s.gw.url, key, B);
    const native = await b.chat({ model: "x", messages, think: true });
    assert.equal(native.message.thinking, "Greeting, so greet back.");
    assert.equal(native.message.content, "Hello!");
    let thinking = "";
    for await (const part of await b.chat({ model: "x", messages, think: true, stream: true })) {
      thinking += part.message.thinking ?? "";
    }
    assert.equal(thinking, "Greeting, so greet back.");
    assert.equal(s.fake.chats.length, 4);
  });
}

Deno.test("generation options, JSON mode, thinking and tool choice reach vLLM under its own names", async () => {
  await using s = await VllmScenario.start();
  const key = await s.gw.key({ tools: true, thinking: true });
  await s.gw.post(A, key, {
    messages: USER_HELLO,
    temperature: 0.2,
    top_p: 0.9,
    max_tokens: 64,
    stop: "END",
    seed: 7,
    presence_penalty: 0.5,
    response_format: { type: "json_object" },
    reasoning_effort: "low",
    tools: [WEATHER],
    tool_choice: { type: "function", function: { name: "get_weather" } },
  });
  const a = s.fake.last;
  assert.equal(a.temperature, 0.2);
  assert.equal(a.top_p, 0.9);
  assert.equal(a.max_tokens, 64);
  assert.deepEqual(a.stop, ["END"]);
  assert.equal(a.seed, 7);
  assert.equal(a.presence_penalty, 0.5);
  assert.deepEqual(a.response_format, { type: "json_object" });
  assert.equal(a.reasoning_effort, "low");
  assert.deepEqual(a.tool_choice, { type: "function", function: { name: "get_weather" } });

  const schema = { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] };
  await s.gw.post(B, key, {
    messages: USER_HELLO,
    format: schema,
    think: false,
    options: { num_predict: 50, top_k: 20, min_p: 0.05, repeat_penalty: 1.1, num_ctx: 4096 },
  });
  const b = s.fake.last;
  assert.equal(b.max_tokens, 50);
  assert.equal(b.top_k, 20);
  assert.equal(b.min_p, 0.05);
  assert.equal(b.repetition_penalty, 1.1, "vLLM's name for it");
  assert.equal(b.num_ctx, undefined, "a context size is the server's own setting there");
  assert.deepEqual(b.response_format, { type: "json_schema", json_schema: { name: "response", schema } });
  assert.deepEqual(b.chat_template_kwargs, { enable_thinking: false });
  assert.equal(b.reasoning_effort, undefined);
});
