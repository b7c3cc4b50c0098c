import assert from "node:assert/strict";
import { parseCountTokens, parseMessages } from "./anthropic.ts";

const PNG = "iVBORw0KGgo=";
const image = (data = PNG) => ({ type: "image", source: { type: "base64", media_type: "image/png", data } });

Deno.test("a user turn becomes its tool results first, then the user's text with every image of the turn", () => {
  const request = parseMessages({
    max_tokens: 10,
    system: "Be brief.",
    messages: [
      { role: "user", content: "Weather in Oslo and Bergen?" },
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: "Two cities.", signature: "c2ln" },
          { type: "redacted_thinking", data: "opaque" },
          { type: "text", text: "Checking both." },
          { type: "tool_use", id: "t1", name: "weather", input: { city: "Oslo" } },
          { type: "tool_use", id: "t2", name: "weather", input: { city: "Bergen" } },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "t1", content: "3 °C" },
          {
            type: "tool_result",
            tool_use_id: "t2",
            is_error: true,
            content: [{ type: "text", text: "timed out" }, image("AAAA")],
          },
          { type: "text", text: "And a picture:" },
          image(),
        ],
      },
    ],
  });
  assert.deepEqual(request.messages, [
    { role: "system", content: "Be brief." },
    { role: "user", content: "Weather in Oslo and Bergen?" },
    {
      role: "assistant",
      content: "Checking both.",
      thinking: "Two cities.",
      toolCalls: [
        { id: "t1", name: "weather", arguments: { city: "Oslo" } },
        { id: "t2", name: "weather", arguments: { city: "Bergen" } },
      ],
    },
    { role: "tool", content: "3 °C", toolCallId: "t1", toolName: "weather" },
    { role: "tool", content: "Error: timed out", toolCallId: "t2", toolName: "weather" },
    { role: "user", content: "And a picture:", images: ["AAAA", PNG] },
  ]);
});

Deno.test("a turn of tool results alone adds no empty user message; a system turn is a system message", () => {
  const request = parseMessages({
    max_tokens: 10,
    messages: [
      { role: "system", content: [{ type: "text", text: "Rules." }] },
      { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "f", input: {} }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "t1" }] },
    ],
  });
  assert.deepEqual(request.messages.map((m) => [m.role, m.content]), [
    ["system", "Rules."],
    ["assistant", ""],
    ["tool", ""],
  ]);
});

Deno.test("limits, sampling, stop sequences, tools, the tool choice, thinking and JSON output map to the request", () => {
  const base = { max_tokens: 300, messages: [{ role: "user", content: "hi" }] };
  const request = parseMessages({
    ...base,
    model: "claude-any",
    stream: true,
    temperature: 0.3,
    top_p: 0.8,
    top_k: 20,
    stop_sequences: ["END"],
    tools: [{ name: "f", description: "F", input_schema: { type: "object" }, type: "custom" }],
    tool_choice: { type: "any", disable_parallel_tool_use: true },
    thinking: { type: "enabled", budget_tokens: 2048 },
    output_config: { format: { type: "json_schema", schema: { type: "object" } } },
  });
  assert.equal(request.model, "claude-any");
  assert.equal(request.stream, true);
  assert.deepEqual(request.options, {
    numPredict: 300,
    temperature: 0.3,
    topP: 0.8,
    topK: 20,
    stop: ["END"],
  });
  assert.deepEqual(request.tools, [{ name: "f", description: "F", parameters: { type: "object" } }]);
  assert.equal(request.toolChoice, "required");
  assert.equal(request.think, true);
  assert.deepEqual(request.format, { type: "object" });

  const choice = (tool_choice: unknown) => parseMessages({ ...base, tool_choice }).toolChoice;
  assert.equal(choice({ type: "auto" }), "auto");
  assert.equal(choice({ type: "none" }), "none");
  assert.deepEqual(choice({ type: "tool", name: "f" }), { name: "f" });
  const think = (extra: object) => parseMessages({ ...base, ...extra }).think;
  assert.equal(think({}), undefined, "no thinking asked: the key and the model decide");
  assert.equal(think({ thinking: { type: "disabled" } }), false);
  assert.equal(think({ thinking: { type: "adaptive" } }), true);
  assert.equal(think({ output_config: { effort: "medium" } }), "medium");
  assert.equal(think({ thinking: { type: "disabled" }, output_config: { effort: "high" } }), false);
  assert.deepEqual(
    parseMessages({ ...base, output_format: { type: "json_schema", schema: { type: "array" } } }).format,
    { type: "array" },
  );
});

Deno.test("what no chat backend can serve is refused by name", () => {
  const refused = (body: object, message: RegExp) =>
    assert.throws(() => parseMessages({ max_tokens: 5, ...body }), (e: Error) => message.test(e.message));
  const user = (...content: unknown[]) => ({ messages: [{ role: "user", content }] });
  const hi = { messages: [{ role: "user", content: "hi" }] };
  refused(
    user({ type: "image", source: { type: "url", url: "https://example.com/a.png" } }),
    /"messages\[0\]\.content\[0\]\.source" is an image by url; .* never fetches them/,
  );
  refused(user({ type: "image", source: { type: "file", file_id: "f1" } }), /is an image by file/);
  refused(user({ type: "document", source: {} }), /is a document block, which this gateway cannot serve/);
  refused(user({ type: "tool_use", id: "a", name: "f", input: {} }), /only an assistant turn may carry/);
  refused(
    { messages: [{ role: "assistant", content: [{ type: "tool_result", tool_use_id: "a" }] }] },
    /only a user turn may carry/,
  );
  refused(
    { messages: [{ role: "system", content: [image()] }] },
    /"messages\[0\]\.content\[0\]" must be a text block in a system turn/,
  );
  refused(
    { ...hi, tools: [{ type: "x".repeat(500), name: "big" }] },
    /server tool x{80}…, which this gateway cannot serve$/,
  );
  refused({ ...hi, tools: [{ name: "f" }] }, /"tools\[0\]\.input_schema" must be an object/);
  refused(user(image("***")), /not valid base64 image data/);
});

Deno.test("count_tokens bodies need no max_tokens, but one given must be valid", () => {
  assert.equal(parseCountTokens({ messages: [{ role: "user", content: "hi" }] }).messages.length, 1);
  assert.throws(
    () => parseCountTokens({ max_tokens: 0, messages: [{ role: "user", content: "hi" }] }),
    /"max_tokens" is too small/,
  );
  assert.throws(() => parseCountTokens([]), /the body must be a JSON object/);
});
