/** The Vercel AI SDK's OpenAI-compatible provider, given only the gateway's base URL and a key. */
import assert from "node:assert/strict";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, streamText } from "ai";
import { Scenario } from "./harness.ts";
import { weatherTool } from "./support/weather_tool.ts";

Deno.test("AI SDK: generateText, and streamText calling a tool", async () => {
  await using s = await Scenario.start();
  const key = await s.gw.key({ tools: true });
  const gateway = createOpenAICompatible({ name: "gateway", baseURL: `${s.gw.url}/v1`, apiKey: key });

  s.fake().reply = () => ({ content: "Hello there", promptTokens: 6, completionTokens: 2 });
  const text = await generateText({ model: gateway("any"), prompt: "Greet me", maxRetries: 0 });
  assert.equal(text.text, "Hello there");
  assert.equal(text.finishReason, "stop");
  assert.equal(text.usage.inputTokens, 6);
  assert.equal(text.usage.outputTokens, 2);

  s.fake().reply = () => ({
    toolCalls: [{ id: "call_t1", name: "get_weather", arguments: { city: "Oslo" } }],
  });
  const calls: unknown[] = [];
  const stream = streamText({
    model: gateway("any"),
    prompt: "Weather in Oslo?",
    maxRetries: 0,
    tools: { get_weather: weatherTool(calls) },
  });
  const toolCalls = await stream.toolCalls;
  assert.equal(toolCalls.length, 1);
  assert.equal(toolCalls[0].toolName, "get_weather");
  assert.deepEqual(toolCalls[0].input, { city: "Oslo" });
  assert.equal(await stream.finishReason, "tool-calls");
  assert.deepEqual(calls, [{ city: "Oslo" }], "the SDK ran the tool with the streamed arguments");
  assert.equal(s.fake().last.stream, true);
});
