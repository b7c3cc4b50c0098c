import assert from "node:assert/strict";
import type { ChatEvent, ChatRequest } from "../chat/types.ts";
import { BackendFailure } from "../errors.ts";
import { anthropicStreamRenderer } from "./anthropic_stream.ts";
import type { StreamContext } from "./face.ts";

const request: ChatRequest = {
  model: "m1",
  // 12 characters of prompt: an estimate of 3 tokens.
  messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "hi?" }],
  stream: true,
  includeUsage: true,
  options: {},
};

function renderer() {
  const ctx: StreamContext = {
    requestId: "r1",
    startedAt: 0,
    model: "m1",
    alias: "m1",
    includeUsage: true,
    request,
    now: () => 0,
    elapsedNs: () => 1,
  };
  return anthropicStreamRenderer(ctx);
}

function events(text: string) {
  return text.trimEnd().split("\n\n").map((block) => {
    const [name, data] = block.split("\n");
    const payload = JSON.parse(data.slice("data: ".length));
    assert.equal(name, `event: ${payload.type}`);
    return payload as Record<string, unknown>;
  });
}

const done = (finishReason: "stop" | "length" | "tool_calls" = "stop"): ChatEvent => ({
  type: "done",
  finishReason,
  promptTokens: 30,
  completionTokens: 12,
});

Deno.test("an answer with nothing in it still has one text block, and max_tokens when cut by the limit", () => {
  const out = events(renderer().event(done("length")));
  assert.deepEqual(out.map((e) => e.type), [
    "message_start",
    "ping",
    "content_block_start",
    "content_block_stop",
    "message_delta",
    "message_stop",
  ]);
  assert.deepEqual(out[0].message, {
    id: "msg_r1",
    type: "message",
    role: "assistant",
    model: "m1",
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: { input_tokens: 3, output_tokens: 0 },
  });
  assert.deepEqual(out[2].content_block, { type: "text", text: "" });
  assert.deepEqual(out[4], {
    type: "message_delta",
    delta: { stop_reason: "max_tokens", stop_sequence: null },
    usage: { input_tokens: 30, output_tokens: 12 },
  });
});

Deno.test("text after a tool call opens a new block; each tool call is one whole block", () => {
  const r = renderer();
  const text = [
    r.event({ type: "delta", content: "A" }),
    r.event({ type: "delta", content: "B" }),
    r.event({
      type: "delta",
      toolCalls: [{ name: "f", arguments: { x: 1 } }, { id: "c2", name: "g", arguments: {} }],
    }),
    r.event({ type: "delta", content: "C" }),
    r.event(done()),
  ].join("");
  const out = events(text);
  const starts = out.filter((e) => e.type === "content_block_start");
  assert.deepEqual(starts.map((e) => [e.index, (e.content_block as { type: string }).type]), [
    [0, "text"],
    [1, "tool_use"],
    [2, "tool_use"],
    [3, "text"],
  ]);
  const first = starts[1].content_block as { id: string };
  assert.match(first.id, /^call_\w+$/, "a call without an id gets one");
  assert.deepEqual(starts[2].content_block, { type: "tool_use", id: "c2", name: "g", input: {} });
  assert.equal(out.filter((e) => e.type === "content_block_stop").length, 4);
  assert.deepEqual(out.at(-2)!.delta, { stop_reason: "tool_use", stop_sequence: null });
});

Deno.test("a stream that breaks ends with the usage billed for it, then Anthropic's error event", () => {
  const r = renderer();
  const text = r.event({ type: "delta", thinking: "hmm", content: "Hello" }) +
    r.error(new BackendFailure("the model server's stream broke off", false, true));
  const out = events(text);
  assert.deepEqual(out.map((e) => e.type).slice(-2), ["message_delta", "error"]);
  // "hmm" and "Hello" (8 characters) as the account estimates them: 2 tokens; the prompt 3.
  assert.deepEqual(out.at(-2)!.usage, { input_tokens: 3, output_tokens: 2 });
  assert.deepEqual(out.at(-1)!.error, {
    type: "api_error",
    message: "the model server's stream broke off",
    details: { error_code: "bad_gateway" },
  });
  const broken = events(renderer().error(new BackendFailure("gone", false, true)));
  assert.deepEqual(broken.map((e) => e.type), ["message_start", "ping", "message_delta", "error"]);
});
