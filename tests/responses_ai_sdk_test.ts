/**
 * The Vercel AI SDK's default OpenAI provider (`openai("…")` from `@ai-sdk/openai`, which speaks the Responses
 * API), given only the gateway's base URL and a key: generateText, streamText with a tool the SDK runs over two
 * steps, the usage it reports against the ledger's records (a stream cut by its backend included), and the
 * clear refusal when it refers to stored items instead of sending them.
 */
import assert from "node:assert/strict";
import { createOpenAI } from "@ai-sdk/openai";
import { APICallError, generateText, stepCountIs, streamText } from "ai";
import { Scenario } from "./harness.ts";
import type { UsageRecord } from "../lib/usage/types.ts";
import { weatherTool } from "./support/weather_tool.ts";

const provider = (s: Scenario, apiKey: string) => createOpenAI({ baseURL: `${s.gw.url}/v1`, apiKey });

/** The SDK's usage of one model call against the record it left. */
function assertUsage(
  usage: { inputTokens: number | undefined; outputTokens: number | undefined },
  rec: UsageRecord,
): void {
  assert.equal(rec.format, "responses");
  assert.deepEqual([usage.inputTokens, usage.outputTokens], [rec.promptTokens, rec.completionTokens]);
}

Deno.test("AI SDK default OpenAI provider: generateText, billed as it reports", async () => {
  await using s = await Scenario.start();
  const key = await s.gw.key();
  s.fake().reply = () => ({ content: "Hello there", promptTokens: 6, completionTokens: 2 });
  const before = s.gw.usage.length;
  const text = await generateText({ model: provider(s, key)("any"), prompt: "Greet me", maxRetries: 0 });
  assert.equal(text.text, "Hello there");
  assert.equal(text.finishReason, "stop");
  assert.equal(s.gw.usage.length, before + 1);
  assertUsage(text.usage, s.gw.usage[before]);
  assert.deepEqual([text.usage.inputTokens, text.usage.outputTokens], [6, 2]);
  assert.deepEqual(s.fake().last.messages, [{ role: "user", content: "Greet me" }]);
});

Deno.test("AI SDK default OpenAI provider: streamText runs a tool, then answers with its result", async () => {
  await using s = await Scenario.start();
  const key = await s.gw.key({ tools: true });
  let step = 0;
  s.fake().reply = () =>
    ++step === 1
      ? { toolCalls: [{ id: "call_t1", name: "get_weather", arguments: { city: "Oslo" } }], promptTokens: 20 }
      : { content: "It is 3 °C in Oslo.", promptTokens: 30, completionTokens: 7 };
  const calls: unknown[] = [];
  const before = s.gw.usage.length;
  const stream = streamText({
    model: provider(s, key)("any"),
    prompt: "Weather in Oslo?",
    maxRetries: 0,
    stopWhen: stepCountIs(2),
    tools: { get_weather: weatherTool(calls) },
  });
  assert.equal(await stream.text, "It is 3 °C in Oslo.");
  assert.deepEqual(calls, [{ city: "Oslo" }], "the SDK ran the tool with the streamed arguments");
  const steps = await stream.steps;
  assert.equal(steps.length, 2);
  assert.equal(steps[0].finishReason, "tool-calls");
  assert.deepEqual(steps[0].toolCalls.map((c) => [c.toolName, c.input]), [["get_weather", { city: "Oslo" }]]);
  assert.equal(steps[1].finishReason, "stop");

  // Each step is one request, one record, billed as the SDK reports it.
  assert.equal(s.gw.usage.length, before + 2);
  steps.forEach((st, i) => assertUsage(st.usage, s.gw.usage[before + i]));
  const total = await stream.totalUsage;
  const records = s.gw.usage.slice(before);
  assert.equal(total.inputTokens, records.reduce((n, r) => n + r.promptTokens, 0));
  assert.equal(total.outputTokens, records.reduce((n, r) => n + r.completionTokens, 0));

  // The second step sent the call and its result back: the backend saw the whole conversation.
  const sent = s.fake().last.messages as Record<string, unknown>[];
  assert.deepEqual(sent.map((m) => m.role), ["user", "assistant", "tool"]);
  assert.equal(sent[2].tool_call_id, "call_t1");
  assert.equal(sent[2].tool_name, "get_weather");
  assert.deepEqual(JSON.parse(String(sent[2].content)), { celsius: 3 });
  assert.equal(s.fake().last.stream, true);
});

Deno.test("AI SDK default OpenAI provider: a stream cut by its backend reports the usage it is billed", async () => {
  await using s = await Scenario.start();
  const key = await s.gw.key();
  s.fake().reply = () => ({ content: "one two three four five six" });
  s.fake().streamFault = { kind: "crash", after: 3 };
  const errors: unknown[] = [];
  const before = s.gw.usage.length;
  const stream = streamText({
    model: provider(s, key)("any"),
    prompt: "Count to six",
    maxRetries: 0,
    onError: ({ error }) => void errors.push(error),
  });
  const parts: { type: string }[] = [];
  for await (const part of stream.fullStream) parts.push(part);
  assert.equal(s.gw.usage.length, before + 1);
  const rec = s.gw.usage[before];
  assert.equal(rec.status, "partial");
  assert.equal(errors.length, 1, "the SDK reported the failure");
  assert.match(String((errors[0] as Error).message), /model server/);
  const finish = parts.findLast((p) => p.type === "finish-step") as
    | { usage: { inputTokens?: number; outputTokens?: number } }
    | undefined;
  assert.ok(finish, `a finish-step part in ${parts.map((p) => p.type)}`);
  assertUsage(
    { inputTokens: finish.usage.inputTokens, outputTokens: finish.usage.outputTokens },
    rec,
  );
  assert.ok(rec.completionTokens > 0);
});

Deno.test("AI SDK default OpenAI provider: stored-item references get a clear 400; with store false it works", async () => {
  await using s = await Scenario.start();
  const key = await s.gw.key({ tools: true });
  const model = provider(s, key)("any");
  // A first step with text and a call: the SDK then refers to the text by its item id unless store is false.
  let step = 0;
  s.fake().reply = () =>
    ++step === 1
      ? {
        content: "Let me look.",
        toolCalls: [{ id: `call_${step}`, name: "get_weather", arguments: { city: "Oslo" } }],
      }
      : { content: "3 °C." };
  const run = (store?: boolean) => {
    step = 0;
    return generateText({
      model,
      prompt: "Weather in Oslo?",
      maxRetries: 0,
      stopWhen: stepCountIs(2),
      tools: { get_weather: weatherTool([]) },
      ...(store === undefined ? {} : { providerOptions: { openai: { store } } }),
    });
  };
  await assert.rejects(run(), (e: unknown) => {
    assert.ok(APICallError.isInstance(e), String(e));
    assert.equal(e.statusCode, 400);
    assert.match(e.message, /refers to a stored item .* store: false/);
    return true;
  });
  const ok = await run(false);
  assert.equal(ok.text, "3 °C.");
  assert.equal(ok.steps.length, 2);
});
