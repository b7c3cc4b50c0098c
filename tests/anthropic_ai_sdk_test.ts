/** The Vercel AI SDK's Anthropic provider (`@ai-sdk/anthropic`), given only the gateway's base URL and a key. */
import assert from "node:assert/strict";
import { generateText, stepCountIs, streamText } from "ai";
import { Scenario } from "./harness.ts";
import { anthropicProvider } from "./support/anthropic_clients.ts";
import { weatherTool } from "./support/weather_tool.ts";

Deno.test("AI SDK Anthropic provider: generateText, with the system text and the limit passed on", async () => {
  await using s = await Scenario.start();
  const key = await s.gw.key();
  const claude = anthropicProvider(s.gw.url, key);
  s.fake().reply = () => ({ content: "Hello there", promptTokens: 6, completionTokens: 2 });
  const text = await generateText({
    model: claude("claude-any"),
    system: "Be brief.",
    prompt: "Greet me",
    maxOutputTokens: 64,
    maxRetries: 0,
  });
  assert.equal(text.text, "Hello there");
  assert.equal(text.finishReason, "stop");
  assert.equal(text.usage.inputTokens, 6);
  assert.equal(text.usage.outputTokens, 2);
  const asked = s.fake().last;
  assert.deepEqual(asked.messages, [
    { role: "system", content: "Be brief." },
    { role: "user", content: "Greet me" },
  ]);
  assert.equal((asked.options as { num_predict: number }).num_predict, 64);
  assert.equal(s.fake().chats[0].headers.get("x-api-key"), null, "the client's key goes no further");
});

Deno.test("AI SDK Anthropic provider: streamText calls a tool the SDK runs, then answers with its result", async () => {
  await using s = await Scenario.start();
  const key = await s.gw.key({ tools: true });
  const claude = anthropicProvider(s.gw.url, key);
  s.fake().reply = (body) =>
    (body.messages as { role: string }[]).some((m) => m.role === "tool")
      ? { content: "It is 3 degrees." }
      : { toolCalls: [{ id: "call_t1", name: "get_weather", arguments: { city: "Oslo" } }] };
  const ran: unknown[] = [];
  const stream = streamText({
    model: claude("claude-any"),
    prompt: "Weather in Oslo?",
    maxOutputTokens: 64,
    maxRetries: 0,
    stopWhen: stepCountIs(2),
    tools: { get_weather: weatherTool(ran) },
  });
  assert.equal(await stream.text, "It is 3 degrees.");
  const steps = await stream.steps;
  assert.equal(steps.length, 2);
  assert.equal(steps[0].finishReason, "tool-calls");
  assert.deepEqual(steps[0].toolCalls.map((c) => [c.toolName, c.input]), [["get_weather", { city: "Oslo" }]]);
  assert.deepEqual(ran, [{ city: "Oslo" }], "the SDK ran the tool with the streamed input");
  const [first, second] = s.fake().chats.map((c) => c.body);
  assert.equal(first.stream, true);
  assert.deepEqual((second.messages as unknown[]).slice(1), [
    {
      role: "assistant",
      content: "",
      tool_calls: [{
        id: "call_t1",
        function: { index: 0, name: "get_weather", arguments: { city: "Oslo" } },
      }],
    },
    { role: "tool", content: '{"celsius":3}', tool_name: "get_weather", tool_call_id: "call_t1" },
  ]);
  assert.deepEqual(s.gw.usage.map((r) => [r.format, r.stream, r.status]), [
    ["anthropic", true, "ok"],
    ["anthropic", true, "ok"],
  ]);
});
