import assert from "node:assert/strict";
import fc from "fast-check";
import { commonLineContent, commonNamedLine } from "./ollama_line.ts";

/** A line as Ollama writes it, fields in its order. */
const line = (content: string, model = "llama3.1:8b", time = "2026-01-01T00:00:00.123456789Z") =>
  JSON.stringify({ model, created_at: time, message: { role: "assistant", content }, done: false });

Deno.test("the common line gives exactly the text JSON.parse gives", () => {
  const texts = [
    "",
    "w12 ",
    " the",
    'say "hi"',
    "back\\slash",
    "\\",
    '\\"',
    "line\nbreak\ttab\r",
    "\u0000\u001f\u007f",
    "naïve — ünïcode",
    "😀 astral",
    "\ud800 lone high",
    "lone low \udc00",
    "\u2028\u2029",
    '"},"done":false}',
    '{"model":"x"}',
  ];
  for (const text of texts) {
    const l = line(text);
    assert.equal(commonLineContent(l), JSON.parse(l).message.content, l);
    assert.deepEqual(commonNamedLine(l), { model: "llama3.1:8b", content: JSON.parse(l).message.content }, l);
  }
  // Escapes JSON.stringify does not write, as other encoders (Go's) do.
  const go =
    '{"model":"m","created_at":"t","message":{"role":"assistant","content":"\\u003c\\/b\\u003e \\u00e9"},"done":false}';
  assert.equal(commonLineContent(go), "</b> é");
  assert.deepEqual(commonNamedLine(go), { model: "m", content: "</b> é" });
});

Deno.test("any other line is left to JSON.parse", () => {
  const others = [
    JSON.stringify({ model: "m", created_at: "t", message: { role: "assistant", content: "x" }, done: true }),
    JSON.stringify({
      model: "m",
      created_at: "t",
      message: { role: "assistant", content: "", thinking: "hm" },
      done: false,
    }),
    JSON.stringify({
      model: "m",
      created_at: "t",
      message: { role: "assistant", content: "", tool_calls: [] },
      done: false,
    }),
    JSON.stringify({
      created_at: "t",
      model: "m",
      message: { role: "assistant", content: "x" },
      done: false,
    }),
    JSON.stringify({
      model: "m",
      created_at: "t",
      message: { content: "x", role: "assistant" },
      done: false,
    }),
    JSON.stringify({ model: "m", created_at: "t", message: { role: "user", content: "x" }, done: false }),
    JSON.stringify({
      model: "m",
      created_at: "t",
      message: { role: "assistant", content: "x" },
      done: false,
      extra: 1,
    }),
    JSON.stringify({ error: "boom" }),
    line("x") + " ",
    " " + line("x"),
    line("x").slice(0, -1),
    line("x") + "}",
    line("x", 'a"b'),
    line("x", "a\\b"),
    line("x", "m", 't"z'),
    // Not JSON at all: a raw control character, an escape JSON does not have, a cut-off escape.
    '{"model":"m","created_at":"t","message":{"role":"assistant","content":"a\nb"},"done":false}',
    '{"model":"m","created_at":"t","message":{"role":"assistant","content":"\\x41"},"done":false}',
    '{"model":"m","created_at":"t","message":{"role":"assistant","content":"\\u12"},"done":false}',
    '{"model":"m","created_at":"t","message":{"role":"assistant","content":"a\\"},"done":false}',
    "",
  ];
  for (const l of others) {
    assert.equal(commonLineContent(l), undefined, l);
    assert.equal(commonNamedLine(l), undefined, l);
  }
});

Deno.test("a name whose escaped quote looks like the form is not taken for it", () => {
  // The model's value is `a\","created_at":"…` : its first quote is escaped, so the form is not there.
  const crafted =
    '{"model":"a\\","created_at":"t","message":{"role":"assistant","content":"x"},"done":false}';
  assert.equal(commonLineContent(crafted), undefined);
  assert.equal(commonNamedLine(crafted), undefined);
});

Deno.test("any text, name and time: the common line's text is JSON.parse's, and any other line is left to it", () => {
  fc.assert(
    fc.property(
      fc.string({ unit: "binary", maxLength: 40 }),
      fc.string({ unit: "grapheme-ascii", maxLength: 12 }),
      fc.string({ unit: "grapheme-ascii", maxLength: 12 }),
      (text, model, time) => {
        const l = line(text, model, time);
        // deno-lint-ignore no-control-regex -- what a name or time must not hold to be of the form
        const plainNames = !/["\\\u0000-\u001f]/.test(model + time);
        assert.equal(commonLineContent(l), plainNames ? JSON.parse(l).message.content : undefined, l);
        const parsed = JSON.parse(l);
        assert.deepEqual(
          commonNamedLine(l),
          plainNames ? { model, content: parsed.message.content } : undefined,
          l,
        );
        // Cut or padded, the line is not of the form.
        assert.equal(commonLineContent(l.slice(0, -1)), undefined);
        assert.equal(commonLineContent(`${l} `), undefined);
      },
    ),
    { numRuns: 3_000 },
  );
});

Deno.test("a very long line is left to JSON.parse rather than matched (a line of escapes must not throw)", () => {
  for (const text of ['\\"'.repeat(2_000_000), "x".repeat(70_000), "x".repeat(60_000)]) {
    const l = line(text);
    const expected = l.length > 64 * 1024 ? undefined : text;
    assert.equal(commonLineContent(l), expected);
    assert.equal(commonNamedLine(l)?.content, expected);
  }
});
