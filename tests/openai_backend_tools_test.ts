/**
 * Tool calls between the official clients of both formats and an OpenAI-compatible backend (a fake vLLM):
 * that wire streams calls in fragments and pairs results with calls by id, where format B clients send
 * objects and may send no ids at all, so the gateway has to translate both ways without losing a pairing.
 */
import assert from "node:assert/strict";
import OpenAI from "openai";
import { ollamaClient, openaiClient } from "./support/clients.ts";
import { B, VllmScenario, WEATHER } from "./support/openai_backend.ts";

Deno.test("tool calls from a vLLM stream: the openai SDK accumulates them, the ollama client gets objects", async () => {
  await using s = await VllmScenario.start();
  const key = await s.gw.key({ tools: true });
  s.fake.reply = () => ({
    toolCalls: [
      { name: "get_weather", arguments: { city: "Oslo", when: { day: "today" } } },
      { id: "call_fixed1", name: "get_weather", arguments: { city: "Rome" } },
    ],
  });
  const final = await openaiClient(s.gw.url, key).chat.completions.stream({
    model: "x",
    messages: [{ role: "user", content: "Oslo and Rome?" }],
    tools: [WEATHER],
  }).finalChatCompletion();
  const choice = final.choices[0];
  assert.equal(choice.finish_reason, "tool_calls");
  const calls = choice.message.tool_calls!.map((c) => c as OpenAI.ChatCompletionMessageFunctionToolCall);
  assert.deepEqual(calls.map((c) => JSON.parse(c.function.arguments)), [
    { city: "Oslo", when: { day: "today" } },
    { city: "Rome" },
  ]);
  assert.match(calls[0].id, /^chatcmpl-tool-\w+$/, "the backend's id is kept");
  assert.equal(calls[1].id, "call_fixed1");
  assert.deepEqual(s.fake.last.tools, [WEATHER]);

  const native = await ollamaClient(s.gw.url, key, B).chat({
    model: "x",
    messages: [{ role: "user", content: "Oslo and Rome?" }],
    tools: [WEATHER],
  });
  assert.deepEqual(native.message.tool_calls?.map((c) => c.function.arguments), [
    { city: "Oslo", when: { day: "today" } },
    { city: "Rome" },
  ]);
});

Deno.test("a tool result in the history is paired with its call by id, whichever format sent it", async () => {
  await using s = await VllmScenario.start();
  const key = await s.gw.key({ tools: true });
  s.fake.reply = () => ({ content: "It is 3 degrees in Oslo and 18 in Rome." });

  // Format A names the calls; those ids must reach the backend unchanged.
  await openaiClient(s.gw.url, key).chat.completions.create({
    model: "x",
    tools: [WEATHER],
    messages: [
      { role: "user", content: "Oslo and Rome?" },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          {
            id: "call_a1",
            type: "function",
            function: { name: "get_weather", arguments: '{"city":"Oslo"}' },
          },
          {
            id: "call_b2",
            type: "function",
            function: { name: "get_weather", arguments: '{"city":"Rome"}' },
          },
        ],
      },
      { role: "tool", tool_call_id: "call_b2", content: '{"temp_c":18}' },
      { role: "tool", tool_call_id: "call_a1", content: '{"temp_c":3}' },
    ],
  });
  const a = s.fake.last.messages as Record<string, unknown>[];
  assert.deepEqual(
    (a[1].tool_calls as { id: string; function: { arguments: string } }[]).map((c) => c.id),
    ["call_a1", "call_b2"],
  );
  const sentArgs = (a[1].tool_calls as { function: { arguments: string } }[]).map((c) =>
    c.function.arguments
  );
  assert.deepEqual(sentArgs.map((args) => JSON.parse(args)), [{ city: "Oslo" }, { city: "Rome" }]);
  assert.deepEqual([a[2].tool_call_id, a[3].tool_call_id], ["call_b2", "call_a1"]);

  // Format B clients may send calls without ids and results by tool name; the backend still needs ids that
  // pair each result with a call, and distinct ones across turns.
  await ollamaClient(s.gw.url, key, B).chat(
    {
      model: "x",
      tools: [WEATHER],
      messages: [
        { role: "user", content: "Oslo?" },
        {
          role: "assistant",
          content: "",
          tool_calls: [{ function: { name: "get_weather", arguments: { city: "Oslo" } } }],
        },
        { role: "tool", tool_name: "get_weather", content: '{"temp_c":3}' },
        { role: "user", content: "And Rome, and the time there?" },
        {
          role: "assistant",
          content: "",
          tool_calls: [
            { function: { name: "get_weather", arguments: { city: "Rome" } } },
            { function: { name: "get_time", arguments: { city: "Rome" } } },
          ],
        },
        { role: "tool", tool_name: "get_time", content: '{"time":"12:00"}' },
        { role: "tool", tool_name: "get_weather", content: '{"temp_c":18}' },
      ],
    },
  );
  const b = s.fake.last.messages as Record<string, unknown>[];
  const ids = (m: Record<string, unknown>) => (m.tool_calls as { id: string }[]).map((c) => c.id);
  const [first, [weather, time]] = [ids(b[1]), ids(b[4])];
  assert.equal(first.length, 1);
  assert.equal(new Set([...first, weather, time]).size, 3, "every call has its own id");
  assert.ok([...first, weather, time].every((id) => typeof id === "string" && id.length > 0));
  assert.equal(b[2].tool_call_id, first[0]);
  assert.equal(b[5].tool_call_id, time);
  assert.equal(b[6].tool_call_id, weather);
});
