import assert from "node:assert/strict";
import { AnswerCheck, type AnswerField, MAX_TOKEN_COUNT } from "./answer_values.ts";
import { fromOllamaResponse } from "./ollama.ts";
import { fromOpenAIResponse } from "./openai_compatible.ts";
import { BadGateway } from "../errors.ts";
import type { ChatRequest } from "../chat/types.ts";

const REQUEST: ChatRequest = {
  model: "asked",
  messages: [{ role: "user", content: "sixteen chars.." }],
  stream: false,
  includeUsage: false,
  options: {},
};

/** A sink that keeps what it is told, as the metrics would count it. */
function recording() {
  const seen: string[] = [];
  const sink = {
    invalidBackendValue: (server: string, field: AnswerField) => void seen.push(`${server}:${field}`),
  };
  return { seen, check: new AnswerCheck("s1", sink) };
}

const ollama = (extra: Record<string, unknown>, message: Record<string, unknown> = {}) => ({
  model: "m",
  message: { role: "assistant", content: "twelve chars", ...message },
  done: true,
  done_reason: "stop",
  prompt_eval_count: 7,
  eval_count: 3,
  ...extra,
});

Deno.test("token counts: non-negative integers up to 2^24 are believed, anything else is estimated", () => {
  for (const good of [0, 1, MAX_TOKEN_COUNT]) {
    const { seen, check } = recording();
    const r = fromOllamaResponse(ollama({ eval_count: good }), REQUEST, check);
    assert.deepEqual([r.completionTokens, r.estimated, seen], [good, undefined, []]);
  }
  for (const bad of [-2, 1.5, MAX_TOKEN_COUNT + 1, 1e300, "3", null, true, {}]) {
    const { seen, check } = recording();
    const r = fromOllamaResponse(ollama({ eval_count: bad }), REQUEST, check);
    assert.deepEqual([r.promptTokens, r.completionTokens, r.estimated], [7, 3, true], `${bad}`);
    assert.deepEqual(seen, ["s1:completion_tokens"]);
  }
  // Ollama leaves out every metric that is zero: absent is a count of 0, not a missing one.
  const { check } = recording();
  const r = fromOllamaResponse(ollama({ prompt_eval_count: undefined }), REQUEST, check);
  assert.deepEqual([r.promptTokens, r.estimated], [0, undefined]);
});

Deno.test("OpenAI-compatible: missing usage is estimated; unknown finish reasons read as stop", () => {
  const body = (extra: Record<string, unknown>, choice: Record<string, unknown> = {}) => ({
    model: "m",
    choices: [{
      index: 0,
      message: { role: "assistant", content: "twelve chars" },
      finish_reason: "length",
      ...choice,
    }],
    ...extra,
  });
  const { seen, check } = recording();
  const noUsage = fromOpenAIResponse(body({}), REQUEST, check);
  assert.deepEqual([noUsage.promptTokens, noUsage.completionTokens, noUsage.estimated], [4, 3, true]);
  assert.equal(noUsage.finishReason, "length");
  const odd = fromOpenAIResponse(
    body({ usage: { prompt_tokens: 5, completion_tokens: 2 }, model: 7 }, { finish_reason: "eos" }),
    REQUEST,
    check,
  );
  assert.deepEqual([odd.finishReason, odd.model, odd.estimated], ["stop", "asked", undefined]);
  assert.deepEqual(seen.sort(), ["s1:finish_reason", "s1:model"]);
});

Deno.test("names, durations and reasoning of the wrong kind are dropped; empty names are absent", () => {
  const { seen, check } = recording();
  const r = fromOllamaResponse(
    ollama({ model: "x".repeat(300), total_duration: -1 }, {
      thinking: 42,
      tool_calls: [{ id: "", function: { name: "f", arguments: '{"a":1}' } }, {
        id: 9,
        function: { name: "g" },
      }],
    }),
    REQUEST,
    check,
  );
  assert.equal(r.model, "asked");
  assert.equal(r.thinking, undefined);
  assert.equal(r.totalDurationNs, undefined);
  assert.deepEqual(r.toolCalls, [{ name: "f", arguments: { a: 1 } }, { name: "g", arguments: {} }]);
  assert.deepEqual(seen.sort(), ["s1:duration", "s1:model", "s1:reasoning", "s1:tool_call_id"]);
});

Deno.test("an answer that cannot be understood is a BadGateway", () => {
  const { check } = recording();
  const cases = [
    ollama({}, { content: 5 }),
    ollama({ message: null }),
    ollama({}, { tool_calls: [{ function: { arguments: {} } }] }),
    ollama({}, { tool_calls: [{ function: { name: "f", arguments: "[1]" } }] }),
    ollama({}, { tool_calls: "f" }),
    [ollama({})],
  ];
  for (const raw of cases) {
    assert.throws(() => fromOllamaResponse(raw, REQUEST, check), BadGateway, JSON.stringify(raw));
  }
  assert.throws(() => fromOpenAIResponse({ choices: [] }, REQUEST, check), BadGateway);
});

Deno.test("the first invalid value of each server is logged, the others only counted", () => {
  const lines: string[] = [];
  const counted: string[] = [];
  const sink = {
    invalidBackendValue: (server: string, field: AnswerField) => void counted.push(`${server}:${field}`),
  };
  for (const server of ["log-once-1", "log-once-2", "log-once-1"]) {
    const check = new AnswerCheck(server, sink, (line) => lines.push(line));
    check.count(-2, "completion_tokens");
    check.name(17, "model");
  }
  assert.equal(counted.length, 6);
  assert.equal(lines.length, 2);
  assert.match(lines[0], /server "log-once-1" sent an invalid completion_tokens \(-2\)/);
  assert.match(lines[1], /server "log-once-2"/);
});
