/**
 * On /v1/messages the usage a client reports is what was billed: Anthropic's SDK and the AI SDK's Anthropic
 * provider, whole and streamed, read the same counts the ledger stored (read back from the store, not from
 * the pipeline's report). A stream its backend cuts is billed by estimate; Anthropic's SDK still shows that
 * estimate (the message_delta before the error event), while the AI SDK drops a failed stream's usage by
 * design, so for it the raw events are checked instead.
 */
import assert from "node:assert/strict";
import Anthropic from "@anthropic-ai/sdk";
import { generateText, streamText } from "ai";
import { listUsage } from "../lib/usage/mod.ts";
import type { UsageRecord } from "../lib/usage/types.ts";
import { Scenario } from "./harness.ts";
import { anthropicClient, anthropicProvider, sseEvents } from "./support/anthropic_clients.ts";

const HELLO = [{ role: "user" as const, content: "Say hi" }];

/** The ledger's latest record, as stored. */
async function stored(s: Scenario): Promise<UsageRecord> {
  await s.gw.ledger.flush();
  const records = await listUsage(s.gw.kv, { limit: 1000 });
  return records.at(-1)!;
}

function billed(r: UsageRecord) {
  return { input: r.promptTokens, output: r.completionTokens, format: r.format, status: r.status };
}

Deno.test("anthropic SDK and AI SDK: the usage they report is the ledger's record, whole and streamed", async () => {
  await using s = await Scenario.start();
  const key = await s.gw.key();
  let turn = 0;
  // Different counts each time, so a record cannot match another request's by chance.
  s.fake().reply = () => ({
    content: "one two three",
    promptTokens: 10 + ++turn,
    completionTokens: 3 + turn,
  });
  const sdk = anthropicClient(s.gw.url, key);
  const provider = anthropicProvider(s.gw.url, key);

  const whole = await sdk.messages.create({ model: "x", max_tokens: 50, messages: HELLO });
  assert.deepEqual(billed(await stored(s)), { input: 11, output: 4, format: "anthropic", status: "ok" });
  assert.deepEqual([whole.usage.input_tokens, whole.usage.output_tokens], [11, 4]);

  const streamed = await sdk.messages.stream({ model: "x", max_tokens: 50, messages: HELLO }).finalMessage();
  assert.deepEqual(billed(await stored(s)), { input: 12, output: 5, format: "anthropic", status: "ok" });
  assert.deepEqual([streamed.usage.input_tokens, streamed.usage.output_tokens], [12, 5]);

  const generated = await generateText({
    model: provider("x"),
    prompt: "Say hi",
    maxOutputTokens: 64,
    maxRetries: 0,
  });
  assert.deepEqual(billed(await stored(s)), { input: 13, output: 6, format: "anthropic", status: "ok" });
  assert.deepEqual([generated.usage.inputTokens, generated.usage.outputTokens], [13, 6]);

  const stream = streamText({ model: provider("x"), prompt: "Say hi", maxOutputTokens: 64, maxRetries: 0 });
  const usage = await stream.usage;
  assert.deepEqual(billed(await stored(s)), { input: 14, output: 7, format: "anthropic", status: "ok" });
  assert.deepEqual([usage.inputTokens, usage.outputTokens], [14, 7]);
  assert.deepEqual((await listUsage(s.gw.kv, { limit: 1000 })).map((r) => r.stream), [
    false,
    true,
    false,
    true,
  ]);
});

Deno.test("a stream its backend cuts: Anthropic's SDK raises the error and shows the estimate billed for it", async () => {
  await using s = await Scenario.start();
  const key = await s.gw.key();
  s.fake().reply = () => ({ content: "alpha beta gamma delta", promptTokens: 40, completionTokens: 9 });
  s.fake().streamFault = { after: 2, kind: "crash" };

  const stream = anthropicClient(s.gw.url, key).messages.stream({
    model: "x",
    max_tokens: 50,
    system: "Be brief.",
    messages: HELLO,
  });
  await assert.rejects(
    stream.finalMessage(),
    (e: unknown) =>
      e instanceof Anthropic.APIError && e.type === "api_error" &&
      e.apiMessage === "the model server's stream broke off",
  );
  const record = await stored(s);
  assert.equal(record.status, "partial");
  assert.equal(record.tokenSource, "estimate");
  // "Be brief." and "Say hi" (15 characters), "alpha beta " (11): four to a token.
  assert.deepEqual(billed(record), { input: 4, output: 3, format: "anthropic", status: "partial" });
  const shown = stream.currentMessage!;
  assert.deepEqual(shown.content, [{ type: "text", text: "alpha beta " }]);
  assert.equal(shown.stop_reason, null);
  assert.deepEqual([shown.usage.input_tokens, shown.usage.output_tokens], [4, 3]);
});

Deno.test("a stream its backend cuts, to the AI SDK and on the wire: the error is raised, the billed estimate is sent before it", async () => {
  await using s = await Scenario.start();
  const key = await s.gw.key();
  s.fake().reply = () => ({ content: "alpha beta gamma delta" });
  s.fake().streamFault = { after: 2, kind: "error-line" };

  const errors: unknown[] = [];
  const stream = streamText({
    model: anthropicProvider(s.gw.url, key)("x"),
    prompt: "Say hi",
    maxOutputTokens: 64,
    maxRetries: 0,
    onError: ({ error }) => void errors.push(error),
  });
  assert.equal(await stream.text, "alpha beta ");
  assert.equal(await stream.finishReason, "error");
  assert.equal(errors.length, 1);
  assert.match(String(errors[0]), /CUDA error: out of memory/);
  const viaSdk = await stored(s);
  assert.deepEqual(billed(viaSdk), { input: 2, output: 3, format: "anthropic", status: "partial" });

  const res = await s.gw.post("/v1/messages", key, { max_tokens: 50, stream: true, messages: HELLO });
  const events = sseEvents(await res.text());
  assert.deepEqual(events.slice(-2).map((e) => e.event), ["message_delta", "error"]);
  assert.ok(!events.some((e) => e.event === "message_stop"), "no clean finish");
  assert.deepEqual(events.at(-2)!.data, {
    type: "message_delta",
    delta: { stop_reason: null, stop_sequence: null },
    usage: { input_tokens: 2, output_tokens: 3 },
  });
  assert.deepEqual(events.at(-1)!.data, {
    type: "error",
    error: {
      type: "api_error",
      message: "model server reported an error: CUDA error: out of memory",
      details: { error_code: "bad_gateway" },
    },
  });
  assert.deepEqual(billed(await stored(s)), { input: 2, output: 3, format: "anthropic", status: "partial" });
});
