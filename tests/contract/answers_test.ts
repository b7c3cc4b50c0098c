/**
 * The contract's answers: what a working backend says must come back the same from every adapter, whole and
 * streamed: content, token counts for billing, finish reasons, reasoning as thinking, tool calls with their
 * ids, and the server's API key sent only where the kind uses one.
 */
import assert from "node:assert/strict";
import type { ToolCall } from "../../lib/chat/types.ts";
import {
  API_KEY,
  chatRequest,
  collect,
  context,
  cutShort,
  forEachCase,
  serverFor,
  startFake,
} from "./cases.ts";

const TOOLS = [
  { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } },
  { name: "get_time", parameters: { type: "object", properties: {} } },
];
const SCRIPTED_CALLS = [
  { name: "get_weather", arguments: { city: "Oslo", days: 3, units: { temp: "C", wind: ["m/s", "knots"] } } },
  { id: "call_fixed1", name: "get_time", arguments: {} },
];

function assertScriptedCalls(calls: ToolCall[], label: string) {
  assert.deepEqual(
    calls.map(({ name, arguments: args }) => ({ name, arguments: args })),
    SCRIPTED_CALLS.map(({ name, arguments: args }) => ({ name, arguments: args })),
    label,
  );
  assert.equal(calls[1].id, "call_fixed1", `${label}: the backend's call id is kept`);
}

forEachCase((c, adapter, t) => {
  t("a plain answer, whole, with the backend's token counts", async () => {
    await using fake = startFake(c);
    fake.reply = () => ({ content: "Hello there, friend.", promptTokens: 7, completionTokens: 4 });
    const result = await adapter.chat(chatRequest(), serverFor(c, fake), context());
    assert.equal(result.content, "Hello there, friend.");
    assert.equal(result.thinking, undefined);
    assert.deepEqual(result.toolCalls, []);
    assert.equal(result.finishReason, "stop");
    assert.equal(result.promptTokens, 7);
    assert.equal(result.completionTokens, 4);
    assert.equal(result.model, "m1");
    assert.equal(fake.chats.length, 1);
    assert.equal(fake.last.model, "m1");
    assert.equal(fake.last.stream, false, "stream is sent explicitly");
    assert.deepEqual(fake.last.messages, [{ role: "user", content: "hello there" }]);
  });

  for (const includeUsage of [false, true]) {
    t(`a plain answer, streamed, counted by the backend (client includeUsage ${includeUsage})`, async () => {
      await using fake = startFake(c);
      fake.reply = () => ({ content: "one two three four", promptTokens: 9, completionTokens: 4 });
      const stream = await adapter.stream(
        chatRequest({ stream: true, includeUsage }),
        serverFor(c, fake),
        context(),
      );
      assert.equal(stream.model, "m1");
      const got = await collect(stream);
      assert.equal(got.content, "one two three four");
      assert.ok(got.deltas.length >= 4, `streamed in pieces, got ${got.deltas.length}`);
      // Billing needs the counts even when the client did not ask to see them.
      assert.deepEqual(got.done, {
        type: "done",
        finishReason: "stop",
        promptTokens: 9,
        completionTokens: 4,
      });
      assert.equal(fake.last.stream, true);
      assert.equal(fake.streamsCompleted, 1);
    });
  }

  t("finish reason length, whole and streamed, keeps the last piece of content", async () => {
    await using fake = startFake(c);
    fake.reply = () => cutShort(2);
    const whole = await adapter.chat(chatRequest(), serverFor(c, fake), context());
    assert.equal(whole.finishReason, "length");
    assert.equal(whole.content, "cut short here");
    const got = await collect(
      await adapter.stream(chatRequest({ stream: true }), serverFor(c, fake), context()),
    );
    assert.equal(got.content, "cut short here");
    assert.equal(got.done?.finishReason, "length");
    assert.equal(got.done?.completionTokens, 3);
  });

  t("reasoning comes back as thinking, whole and streamed, before the content", async () => {
    await using fake = startFake(c);
    fake.reply = () => ({ thinking: "The user greets me, so greet back.", content: "Hi there!" });
    const whole = await adapter.chat(chatRequest({ think: true }), serverFor(c, fake), context());
    assert.equal(whole.thinking, "The user greets me, so greet back.");
    assert.equal(whole.content, "Hi there!");
    const got = await collect(
      await adapter.stream(chatRequest({ stream: true, think: true }), serverFor(c, fake), context()),
    );
    assert.equal(got.thinking, "The user greets me, so greet back.");
    assert.equal(got.content, "Hi there!");
    const firstContent = got.deltas.findIndex((d) => d.content);
    const lastThinking = got.deltas.findLastIndex((d) => d.thinking);
    assert.ok(lastThinking >= 0 && lastThinking < firstContent, "thinking first, then content");
  });

  t("tool calls, whole: names, object arguments, ids, finish reason tool_calls", async () => {
    await using fake = startFake(c);
    fake.reply = () => ({ toolCalls: SCRIPTED_CALLS, promptTokens: 20, completionTokens: 12 });
    const result = await adapter.chat(chatRequest({ tools: TOOLS }), serverFor(c, fake), context());
    assertScriptedCalls(result.toolCalls, "whole");
    assert.equal(result.finishReason, "tool_calls");
    assert.equal(result.content, "");
    assert.equal(result.completionTokens, 12);
    assert.ok(Array.isArray(fake.last.tools) && fake.last.tools.length === 2, "the tools were offered");
  });

  t("tool calls, streamed: reassembled whole, finish reason tool_calls", async () => {
    await using fake = startFake(c);
    fake.reply = () => ({
      thinking: "Two tools.",
      toolCalls: SCRIPTED_CALLS,
      promptTokens: 20,
      completionTokens: 12,
    });
    const got = await collect(
      await adapter.stream(chatRequest({ stream: true, tools: TOOLS }), serverFor(c, fake), context()),
    );
    assertScriptedCalls(got.toolCalls, "streamed");
    assert.equal(got.thinking, "Two tools.");
    assert.deepEqual(got.done, {
      type: "done",
      finishReason: "tool_calls",
      promptTokens: 20,
      completionTokens: 12,
    });
  });

  t(`the server's API key is ${c.sendsApiKey ? "sent" : "not sent"} as a bearer token`, async () => {
    await using fake = startFake(c);
    await adapter.chat(chatRequest(), serverFor(c, fake), context());
    await collect(await adapter.stream(chatRequest({ stream: true }), serverFor(c, fake), context()));
    assert.equal(fake.chats.length, 2);
    for (const chat of fake.chats) {
      assert.equal(chat.headers.get("authorization"), c.sendsApiKey ? `Bearer ${API_KEY}` : null);
    }
  });
});
