/**
 * Anthropic's official SDK (`@anthropic-ai/sdk`), unchanged, with only the gateway's base URL and a key:
 * `messages.create` on both base URLs, `messages.stream` with `finalMessage()`, a tool_use → tool_result round
 * trip whole and streamed, and an image. What the backend was asked is checked at the fake, what was billed
 * at the ledger. Refusals, the model list and count_tokens are in anthropic_refusals_models_test.ts.
 */
import assert from "node:assert/strict";
import Anthropic from "@anthropic-ai/sdk";
import { Scenario } from "./harness.ts";
import { anthropicClient, PNG, sseEvents } from "./support/anthropic_clients.ts";
import { WEATHER_TOOL } from "./support/anthropic_weather_tool.ts";

type Json = Record<string, unknown>;

const HELLO = [{ role: "user" as const, content: "Say hi" }];

Deno.test("anthropic SDK: messages.create on both base URLs, with the system text, limits and sampling passed on", async () => {
  await using s = await Scenario.start();
  const key = await s.gw.key();
  s.fake().reply = () => ({ content: "Hi there", promptTokens: 11, completionTokens: 2 });
  for (const base of ["", "/api"] as const) {
    const message = await anthropicClient(s.gw.url, key, base).messages.create({
      model: "claude-any",
      max_tokens: 300,
      system: [{ type: "text", text: "Be brief." }, { type: "text", text: "Be kind." }],
      messages: HELLO,
      stop_sequences: ["</end>"],
      temperature: 0.2,
      top_k: 30,
    } as Anthropic.MessageCreateParamsNonStreaming);
    assert.match(message.id, /^msg_\w+$/);
    assert.equal(message.type, "message");
    assert.equal(message.role, "assistant");
    assert.equal(message.model, "m1");
    assert.deepEqual(message.content, [{ type: "text", text: "Hi there" }]);
    assert.equal(message.stop_reason, "end_turn");
    assert.equal(message.stop_sequence, null);
    assert.deepEqual(message.usage, { input_tokens: 11, output_tokens: 2 });
    const asked = s.fake().last;
    assert.deepEqual(asked.messages, [
      { role: "system", content: "Be brief.\nBe kind." },
      { role: "user", content: "Say hi" },
    ]);
    assert.deepEqual(asked.options, { num_predict: 300, temperature: 0.2, top_k: 30, stop: ["</end>"] });
    assert.equal(asked.stream, false);
  }
  assert.deepEqual(
    s.gw.usage.map((r) => [r.format, r.stream, r.status, r.promptTokens, r.completionTokens]),
    [["anthropic", false, "ok", 11, 2], ["anthropic", false, "ok", 11, 2]],
  );
});

Deno.test("anthropic SDK: messages.stream gives thinking and text blocks, and finalMessage() the whole message", async () => {
  await using s = await Scenario.start();
  const key = await s.gw.key({ thinking: true });
  s.fake().reply = () => ({
    thinking: "A greeting.",
    content: "Hello there friend",
    promptTokens: 9,
    completionTokens: 4,
  });
  const stream = anthropicClient(s.gw.url, key).messages.stream({
    model: "claude-any",
    max_tokens: 1024,
    thinking: { type: "enabled", budget_tokens: 512 },
    messages: HELLO,
  });
  const texts: string[] = [];
  stream.on("text", (text) => texts.push(text));
  const message = await stream.finalMessage();
  assert.deepEqual(texts, ["Hello ", "there ", "friend"], "the text came piece by piece");
  assert.deepEqual(message.content, [
    { type: "thinking", thinking: "A greeting.", signature: "" },
    { type: "text", text: "Hello there friend" },
  ]);
  assert.equal(message.stop_reason, "end_turn");
  assert.equal(message.usage.input_tokens, 9);
  assert.equal(message.usage.output_tokens, 4);
  assert.equal(s.fake().last.think, true, "thinking asked for, and the key allows it");
  assert.equal(s.fake().last.stream, true);
});

Deno.test("the stream's events come in Anthropic's order, each named, and the key's whole answer is billed", async () => {
  await using s = await Scenario.start();
  const key = await s.gw.key({ tools: true, thinking: true });
  s.fake().reply = () => ({
    thinking: "Look it up.",
    content: "Checking.",
    toolCalls: [{ id: "call_1", name: "lookup", arguments: { q: "deno" } }],
    promptTokens: 20,
    completionTokens: 7,
  });
  const res = await s.gw.post("/v1/messages", key, {
    max_tokens: 200,
    stream: true,
    messages: HELLO,
    tools: [{ name: "lookup", input_schema: { type: "object" } }],
  }, { "anthropic-version": "2023-06-01" });
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type") ?? "", /^text\/event-stream/);
  const events = sseEvents(await res.text());
  for (const { event, data } of events) assert.equal(data.type, event, "each event's name is its type");
  assert.deepEqual(events.map((e) => e.event), [
    "message_start",
    "ping",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
    "message_delta",
    "message_stop",
  ]);
  const blocks = events.filter((e) => e.event === "content_block_start").map((e) => e.data);
  assert.deepEqual(blocks.map((b) => b.index), [0, 1, 2]);
  assert.deepEqual(blocks.map((b) => (b.content_block as Json).type), ["thinking", "text", "tool_use"]);
  assert.deepEqual(blocks[2].content_block, { type: "tool_use", id: "call_1", name: "lookup", input: {} });
  const deltas = events.filter((e) => e.event === "content_block_delta").map((e) => e.data.delta);
  assert.deepEqual(deltas, [
    { type: "thinking_delta", thinking: "Look it up." },
    { type: "text_delta", text: "Checking." },
    { type: "input_json_delta", partial_json: '{"q":"deno"}' },
  ]);
  const start = events[0].data.message as Json;
  assert.equal(start.role, "assistant");
  assert.deepEqual(start.content, []);
  const end = events.at(-2)!.data;
  assert.deepEqual(end.delta, { stop_reason: "tool_use", stop_sequence: null });
  assert.deepEqual(end.usage, { input_tokens: 20, output_tokens: 7 });
  const [record] = s.gw.usage;
  assert.deepEqual([record.format, record.stream, record.promptTokens, record.completionTokens], [
    "anthropic",
    true,
    20,
    7,
  ]);
});

for (const streamed of [false, true]) {
  Deno.test(`anthropic SDK: a tool_use → tool_result round trip${streamed ? ", streamed" : ""}`, async () => {
    await using s = await Scenario.start();
    const key = await s.gw.key({ tools: true });
    const client = anthropicClient(s.gw.url, key);
    const ask = (messages: Anthropic.MessageParam[]) => {
      const params = { model: "claude-any", max_tokens: 200, tools: [WEATHER_TOOL], messages };
      return streamed ? client.messages.stream(params).finalMessage() : client.messages.create(params);
    };
    const question: Anthropic.MessageParam = { role: "user", content: "Weather in Oslo?" };

    s.fake().reply = () => ({
      toolCalls: [{ id: "call_w1", name: "get_weather", arguments: { city: "Oslo" } }],
    });
    const call = await ask([question]);
    assert.equal(call.stop_reason, "tool_use");
    assert.deepEqual(call.content, [{
      type: "tool_use",
      id: "call_w1",
      name: "get_weather",
      input: { city: "Oslo" },
    }]);
    assert.deepEqual(s.fake().last.tools, [{
      type: "function",
      function: {
        name: "get_weather",
        description: "Weather in a city",
        parameters: WEATHER_TOOL.input_schema,
      },
    }]);

    s.fake().reply = () => ({ content: "It is 3 degrees in Oslo." });
    const answer = await ask([
      question,
      { role: "assistant", content: call.content },
      {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: "call_w1", content: [{ type: "text", text: "3 °C" }] }],
      },
    ]);
    assert.equal(answer.stop_reason, "end_turn");
    assert.deepEqual(answer.content, [{ type: "text", text: "It is 3 degrees in Oslo." }]);
    assert.deepEqual(s.fake().last.messages, [
      { role: "user", content: "Weather in Oslo?" },
      {
        role: "assistant",
        content: "",
        tool_calls: [{
          id: "call_w1",
          function: { index: 0, name: "get_weather", arguments: { city: "Oslo" } },
        }],
      },
      { role: "tool", content: "3 °C", tool_name: "get_weather", tool_call_id: "call_w1" },
    ]);
  });
}

Deno.test("anthropic SDK: a base64 image reaches the backend; an image by URL is refused, never fetched", async () => {
  await using s = await Scenario.start();
  const key = await s.gw.key({ vision: true });
  const client = anthropicClient(s.gw.url, key);
  s.fake().reply = () => ({ content: "A tiny picture." });
  const message = await client.messages.create({
    model: "claude-any",
    max_tokens: 100,
    messages: [{
      role: "user",
      content: [
        { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } },
        { type: "text", text: "What is this?" },
      ],
    }],
  });
  assert.deepEqual(message.content, [{ type: "text", text: "A tiny picture." }]);
  assert.deepEqual(s.fake().last.messages, [{ role: "user", content: "What is this?", images: [PNG] }]);

  let fetched = 0;
  const site = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, () => {
    fetched++;
    return new Response("not an image");
  });
  try {
    await assert.rejects(
      client.messages.create({
        model: "claude-any",
        max_tokens: 100,
        messages: [{
          role: "user",
          content: [{
            type: "image",
            source: { type: "url", url: `http://127.0.0.1:${site.addr.port}/cat.png` },
          }],
        }],
      }),
      (e: unknown) =>
        e instanceof Anthropic.BadRequestError && e.type === "invalid_request_error" &&
        e.apiMessage === 'Cannot parse request: "messages[0].content[0].source" is an image by url; this ' +
            'gateway takes images as base64 data only (source.type "base64") and never fetches them',
    );
  } finally {
    await site.shutdown();
  }
  assert.equal(fetched, 0, "the gateway fetched nothing");
  assert.equal(s.fake().chats.length, 1, "the refused request reached no backend");
});
