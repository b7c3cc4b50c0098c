import assert from "node:assert/strict";
import { responsesStreamRenderer } from "./responses_stream.ts";
import type { StreamContext } from "./face.ts";
import { BackendFailure, ShuttingDown } from "../errors.ts";

type Json = Record<string, unknown>;

function renderer() {
  const ctx: StreamContext = {
    requestId: "r1",
    startedAt: 1_800_000_000_000,
    model: "m1",
    alias: "m1",
    includeUsage: true,
    request: {
      model: "m1",
      messages: [{ role: "user", content: "twelve chars" }],
      stream: true,
      includeUsage: true,
      options: {},
    },
    now: () => 1_800_000_002_000,
    elapsedNs: () => 1,
  };
  return responsesStreamRenderer(ctx);
}

/** The events of an SSE text, checking each is named for its type. */
function events(text: string): Json[] {
  return text.trim().split("\n\n").map((block) => {
    const [name, data] = block.split("\n");
    const event = JSON.parse(data.slice("data: ".length));
    assert.equal(name, `event: ${event.type}`);
    return event;
  });
}

Deno.test("reasoning, text and calls become items in arrival order, each opened, filled and closed", () => {
  const r = renderer();
  const text = r.event({ type: "delta", thinking: "Hmm." }) +
    r.event({ type: "delta", content: "Hel" }) +
    r.event({ type: "delta", content: "lo" }) +
    r.event({
      type: "delta",
      toolCalls: [{ name: "f", arguments: { a: 1 } }, { id: "c9", name: "g", arguments: {} }],
    }) +
    r.event({ type: "done", finishReason: "tool_calls", promptTokens: 5, completionTokens: 7 });
  const all = events(text);
  assert.deepEqual(all.map((e) => e.sequence_number), all.map((_, i) => i));
  assert.deepEqual(all.map((e) => [e.type, e.output_index]), [
    ["response.created", undefined],
    ["response.in_progress", undefined],
    ["response.output_item.added", 0],
    ["response.reasoning_summary_part.added", 0],
    ["response.reasoning_summary_text.delta", 0],
    ["response.reasoning_summary_text.done", 0],
    ["response.reasoning_summary_part.done", 0],
    ["response.output_item.done", 0],
    ["response.output_item.added", 1],
    ["response.content_part.added", 1],
    ["response.output_text.delta", 1],
    ["response.output_text.delta", 1],
    ["response.output_text.done", 1],
    ["response.content_part.done", 1],
    ["response.output_item.done", 1],
    ["response.output_item.added", 2],
    ["response.function_call_arguments.delta", 2],
    ["response.function_call_arguments.done", 2],
    ["response.output_item.done", 2],
    ["response.output_item.added", 3],
    ["response.function_call_arguments.delta", 3],
    ["response.function_call_arguments.done", 3],
    ["response.output_item.done", 3],
    ["response.completed", undefined],
  ]);
  const response = all.at(-1)!.response as Json;
  assert.equal(response.id, "resp_r1");
  assert.equal(response.status, "completed");
  assert.equal(response.completed_at, 1_800_000_002);
  assert.deepEqual(response.usage, {
    input_tokens: 5,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 7,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 12,
  });
  const output = response.output as Json[];
  assert.deepEqual(output.map((i) => [i.type, i.id, i.status]), [
    ["reasoning", "rs_r1_0", "completed"],
    ["message", "msg_r1_1", "completed"],
    ["function_call", "fc_r1_2", "completed"],
    ["function_call", "fc_r1_3", "completed"],
  ]);
  assert.deepEqual((output[1].content as Json[])[0].text, "Hello");
  assert.match(String(output[2].call_id), /^call_\w+$/);
  assert.equal(output[3].call_id, "c9");
  assert.equal(output[2].arguments, '{"a":1}');
});

Deno.test("an answer cut at the limit is incomplete; an empty one is still one message", () => {
  const cut = renderer();
  const cutEvents = events(
    cut.event({ type: "delta", content: "a b" }) +
      cut.event({ type: "done", finishReason: "length", promptTokens: 1, completionTokens: 2 }),
  );
  const last = cutEvents.at(-1)!;
  assert.equal(last.type, "response.incomplete");
  assert.deepEqual((last.response as Json).incomplete_details, { reason: "max_output_tokens" });
  assert.equal(((last.response as Json).output as Json[])[0].status, "incomplete");

  const empty = renderer();
  const emptyEvents = events(
    empty.event({ type: "done", finishReason: "stop", promptTokens: 1, completionTokens: 0 }),
  );
  const output = (emptyEvents.at(-1)!.response as Json).output as Json[];
  assert.deepEqual(output.map((i) => [i.type, (i.content as Json[])[0].text]), [["message", ""]]);
});

Deno.test("a broken stream ends in response.failed with its items so far and the estimate billed for it", () => {
  const r = renderer();
  const text = r.event({ type: "delta", content: "12345678" }) +
    r.error(new BackendFailure("the model server's stream broke off", false, true));
  const last = events(text).at(-1)!;
  assert.equal(last.type, "response.failed");
  const response = last.response as Json;
  assert.equal(response.status, "failed");
  assert.deepEqual(response.error, { code: "bad_gateway", message: "the model server's stream broke off" });
  // "twelve chars" and the 8 characters delivered, at four characters a token.
  assert.deepEqual(
    [(response.usage as Json).input_tokens, (response.usage as Json).output_tokens],
    [3, 2],
  );
  const [item] = response.output as Json[];
  assert.deepEqual([item.status, (item.content as Json[])[0].text], ["incomplete", "12345678"]);

  // Ended before any event (a stopping gateway): the stream still opens, then fails.
  const early = events(renderer().error(new ShuttingDown()));
  assert.deepEqual(early.map((e) => e.type), ["response.created", "response.in_progress", "response.failed"]);
});
