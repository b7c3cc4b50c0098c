import assert from "node:assert/strict";
import { parseResponses } from "./responses_request.ts";
import { InvalidRequest } from "../errors.ts";

Deno.test("a conversation of items becomes the internal messages, turn by turn", () => {
  const request = parseResponses({
    instructions: "Be brief.",
    input: [
      { role: "developer", content: "Use metric units." },
      {
        type: "message",
        role: "user",
        content: [{ type: "input_text", text: "Weather" }, { type: "input_text", text: "in Oslo?" }],
      },
      { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "Need the tool." }] },
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "Checking." }] },
      { type: "function_call", call_id: "c1", name: "weather", arguments: '{"city":"Oslo"}' },
      { type: "function_call", call_id: "c2", name: "time", arguments: "" },
      { type: "function_call_output", call_id: "c1", output: '{"c":3}' },
      { type: "function_call_output", call_id: "c2", output: [{ type: "input_text", text: "12:00" }] },
      { role: "assistant", content: [{ type: "refusal", refusal: "No more." }] },
    ],
  });
  assert.deepEqual(request.messages, [
    { role: "system", content: "Be brief." },
    { role: "system", content: "Use metric units." },
    { role: "user", content: "Weather\nin Oslo?" },
    {
      role: "assistant",
      content: "Checking.",
      thinking: "Need the tool.",
      toolCalls: [
        { id: "c1", name: "weather", arguments: { city: "Oslo" } },
        { id: "c2", name: "time", arguments: {} },
      ],
    },
    { role: "tool", content: '{"c":3}', toolCallId: "c1", toolName: "weather" },
    { role: "tool", content: "12:00", toolCallId: "c2", toolName: "time" },
    { role: "assistant", content: "No more." },
  ]);
  assert.equal(request.stream, false);
  assert.equal(request.includeUsage, true);
});

Deno.test("settings map onto the pipeline's: JSON mode, thinking, tools, limits", () => {
  const request = parseResponses({
    model: "m",
    input: "hi",
    stream: true,
    max_output_tokens: 32,
    temperature: 0.1,
    top_p: 0.5,
    text: { format: { type: "json_schema", name: "n", schema: { type: "object" } } },
    reasoning: { effort: "xhigh" },
    tools: [{ type: "function", name: "f", description: null, parameters: null }],
    tool_choice: { type: "function", name: "f" },
  });
  assert.deepEqual(request, {
    model: "m",
    messages: [{ role: "user", content: "hi" }],
    stream: true,
    includeUsage: true,
    options: { temperature: 0.1, topP: 0.5, numPredict: 32 },
    format: { type: "object" },
    think: "high",
    tools: [{ name: "f" }],
    toolChoice: { name: "f" },
  });
  assert.equal(parseResponses({ input: "x", text: { format: { type: "json_object" } } }).format, "json");
  assert.equal(parseResponses({ input: "x", reasoning: { effort: "minimal" } }).think, false);
  assert.equal(parseResponses({ input: "x", reasoning: { summary: "auto" } }).think, true);
  assert.equal(parseResponses({ input: "x", reasoning: null }).think, undefined);
  assert.equal(parseResponses({ input: "x", previous_response_id: null, store: true }).messages.length, 1);
});

Deno.test("what needs stored state or a fetch is refused by name", () => {
  const cases: [unknown, RegExp][] = [
    [[], /the body must be a JSON object/],
    [{ input: 5 }, /"input" must be a string or an array of items/],
    [{ input: [{ type: "reasoning", summary: [] }] }, /"input" holds no message/],
    [{ input: "x", previous_response_id: "resp_1" }, /"previous_response_id" is not supported/],
    [{ input: [{ id: "fc_1" }] }, /"input\[0\]" refers to a stored item \("fc_1"\)/],
    [
      { input: [{ role: "user", content: [{ type: "input_image", image_url: "https://x.test/a.png" }] }] },
      /"input\[0\]\.content\[0\]\.image_url" must be a data: URI/,
    ],
    [
      { input: [{ type: "function_call", call_id: "c", name: "f", arguments: "[1]" }] },
      /"input\[0\]\.arguments" must encode a JSON object/,
    ],
    [
      { input: [{ role: "user", content: [{ type: "input_file", file_id: "f" }] }] },
      /files are not accepted/,
    ],
  ];
  for (const [body, message] of cases) {
    assert.throws(() => parseResponses(body), (e: unknown) => {
      assert.ok(e instanceof InvalidRequest, String(e));
      assert.match(e.message, message);
      return true;
    });
  }
});
