import assert from "node:assert/strict";
import { ollamaStreamRenderer } from "./ollama_stream.ts";
import { openaiStreamRenderer } from "./openai_stream.ts";
import type { StreamContext } from "./face.ts";
import type { ChatRequest } from "../chat/types.ts";

/** Texts a model may send: quotes, escapes, control characters, lone surrogates, every plane. */
const TEXTS = [
  "",
  "w0 ",
  'say "hi"\\n',
  "tab\there\nnew line\r\u0000\u001f",
  "é 😀 \u2028\u2029",
  "\ud800 lone",
  "{}",
];

const ctx = (alias: string): StreamContext => ({
  requestId: "r1",
  startedAt: 1_790_000_000_000,
  model: 'm "1"',
  alias,
  includeUsage: false,
  request: {} as ChatRequest,
  now: () => 1_790_000_000_123,
  elapsedNs: () => 1,
});

Deno.test("format B: a text delta's line is exactly what the object form writes", () => {
  for (const alias of ["m1", 'a "quoted" \\ alias é']) {
    const renderer = ollamaStreamRenderer(ctx(alias));
    for (const text of TEXTS) {
      const expected = JSON.stringify({
        model: alias,
        created_at: new Date(1_790_000_000_123).toISOString(),
        message: { role: "assistant", content: text },
        done: false,
      }) + "\n";
      assert.equal(renderer.event({ type: "delta", content: text }), expected);
    }
    assert.equal(
      renderer.event({ type: "delta" }),
      JSON.stringify({
        model: alias,
        created_at: new Date(1_790_000_000_123).toISOString(),
        message: { role: "assistant", content: "" },
        done: false,
      }) + "\n",
    );
  }
});

Deno.test("format B: every line is what the object form writes, as the clock moves between lines", () => {
  let now = 1_790_000_000_123;
  const renderer = ollamaStreamRenderer({ ...ctx("m1"), now: () => now, elapsedNs: () => 1_234_567.6 });
  const head = () => ({ model: "m1", created_at: new Date(now).toISOString() });
  for (const step of [0, 0, 1, 0, 999, 86_400_000]) {
    now += step;
    assert.equal(
      renderer.event({ type: "delta", content: "w" }),
      JSON.stringify({ ...head(), message: { role: "assistant", content: "w" }, done: false }) + "\n",
    );
  }
  for (
    const [finishReason, promptTokens, completionTokens] of [["stop", 3, 8], ["length", 0, 0], [
      "stop",
      1.5,
      2,
    ]] as const
  ) {
    now += 1;
    const expected = JSON.stringify({
      ...head(),
      message: { role: "assistant", content: "" },
      done: true,
      done_reason: finishReason,
      total_duration: 1_234_568,
      prompt_eval_count: promptTokens,
      eval_count: completionTokens,
    }) + "\n";
    assert.equal(renderer.event({ type: "done", finishReason, promptTokens, completionTokens }), expected);
  }
});

Deno.test("format A: a text delta's chunk is exactly what the object form writes", () => {
  const renderer = openaiStreamRenderer(ctx("m1"), () => ({}));
  renderer.event({ type: "delta", content: "" });
  for (const text of TEXTS.filter(Boolean)) {
    const expected = `data: ${
      JSON.stringify({
        id: "chatcmpl-r1",
        object: "chat.completion.chunk",
        created: 1_790_000_000,
        model: 'm "1"',
        choices: [{ index: 0, delta: { content: text }, logprobs: null, finish_reason: null }],
      })
    }\n\n`;
    assert.equal(renderer.event({ type: "delta", content: text }), expected);
  }
});
