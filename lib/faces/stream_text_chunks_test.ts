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
