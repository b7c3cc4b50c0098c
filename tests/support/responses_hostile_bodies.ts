/**
 * The material of the Responses API's hostile-input test: one rich body that is valid on its paths (every kind
 * of input item, an inline image, a function tool, JSON mode, reasoning), and for each field of it the values
 * the face refuses. As for the chat paths (hostile_bodies.ts), mutating one field at a time keeps every
 * generated request one mistake away from a good one.
 */
import fc from "fast-check";
import { BAD_IMAGES, type FieldRule, PNG, RawJson } from "./hostile_bodies.ts";
import type { BodyContract } from "./hostile_contract.ts";

export const RESPONSES_PATHS = ["/v1/responses", "/api/v1/responses"] as const;

export function validResponsesBody(): Record<string, unknown> {
  return {
    model: "any",
    // First, as the non-JSON rewrites spoil the text's first integer (tests/support/hostile_contract.ts).
    max_output_tokens: 64,
    instructions: "Be brief.",
    input: [
      { role: "system", content: "Answer in English." },
      {
        type: "message",
        role: "user",
        content: [
          { type: "input_text", text: "What is this?" },
          { type: "input_image", image_url: `data:image/png;base64,${PNG}`, detail: "low" },
        ],
      },
      { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "Look first." }] },
      {
        type: "function_call",
        id: "fc_1",
        call_id: "call_1",
        name: "look",
        arguments: '{"x":1}',
        status: "completed",
      },
      { type: "function_call_output", call_id: "call_1", output: '{"seen":true}' },
      {
        type: "message",
        role: "assistant",
        content: [{ type: "output_text", text: "A cat.", annotations: [] }],
      },
      { role: "user", content: "hello there" },
    ],
    tools: [{
      type: "function",
      name: "look",
      description: "Looks",
      parameters: { type: "object", properties: {} },
      strict: false,
    }],
    tool_choice: "auto",
    parallel_tool_calls: true,
    temperature: 0.5,
    top_p: 0.9,
    text: { format: { type: "json_object" } },
    reasoning: { effort: "low", summary: "auto" },
    stream: false,
    store: false,
    metadata: { purpose: "test" },
  };
}

const INF = new RawJson("1e999");
const USER = ["input", 6];
const PARTS = ["input", 1, "content"];
const REASONING = ["input", 2];
const CALL = ["input", 3];
const OUTPUT = ["input", 4];
const ASSISTANT = ["input", 5];

/** Images refused wherever an image goes: malformed or non-image data, and anything not inline. */
export const BAD_RESPONSE_IMAGES: readonly string[] = [
  ...BAD_IMAGES,
  "https://example.com/cat.png",
  "http://169.254.169.254/latest/meta-data/",
  "file:///etc/passwd",
  PNG,
];

/** Every field of the body, with what it refuses. */
export const RESPONSES_FIELD_RULES: readonly FieldRule[] = [
  { at: ["model"], kinds: ["string"] },
  { at: ["instructions"], kinds: ["string", "null"] },
  { at: ["input"], kinds: ["string", "array"], bad: [[]] },
  { at: [...USER], kinds: ["object"], bad: [{}, { content: "no role" }, { id: "msg_1" }] },
  {
    at: [...USER, "role"],
    kinds: ["string"],
    oneOf: ["user", "assistant", "system", "developer"],
    bad: ["", "User", "tool", "function"],
  },
  { at: [...USER, "content"], kinds: ["string", "array"] },
  {
    at: [...PARTS],
    kinds: ["string", "array"],
    bad: [
      [1],
      [null],
      ["text"],
      [{}],
      [{ type: "input_text" }],
      [{ type: "input_text", text: 5 }],
      [{ type: "refusal" }],
      [{ type: "input_image" }],
      [{ type: "input_image", image_url: 5 }],
      [{ type: "input_image", image_url: null }],
      [{ type: "input_image", file_id: "file-1" }],
      [{ type: "input_file", file_data: "aGk=" }],
      [{ type: "video", video: "clip" }],
    ],
  },
  { at: [...PARTS, 0, "type"], kinds: ["string"], oneOf: ["input_text", "output_text"] },
  { at: [...PARTS, 1, "image_url"], kinds: ["string"], bad: [...BAD_RESPONSE_IMAGES] },
  { at: [...PARTS, 1, "detail"], kinds: ["string", "null"] },
  {
    at: [...REASONING, "type"],
    kinds: ["string"],
    oneOf: ["reasoning"],
    bad: ["message", "function_call", "function_call_output", "item_reference"],
  },
  { at: [...REASONING, "summary"], kinds: ["array"], bad: [[1], [{}], [{ type: "summary_text" }]] },
  { at: [...CALL, "call_id"], kinds: ["string"], bad: [""] },
  { at: [...CALL, "name"], kinds: ["string"], bad: [""] },
  { at: [...CALL, "arguments"], kinds: ["string"], bad: ["[1]", "{bad", '"just a string"', "1", "null"] },
  { at: [...OUTPUT, "call_id"], kinds: ["string"], bad: [""] },
  { at: [...OUTPUT, "output"], kinds: ["string", "array"], bad: [[1], [{ type: "input_image" }], [{}]] },
  {
    at: [...ASSISTANT, "content"],
    kinds: ["string", "array"],
    bad: [[{ type: "output_text" }], [{ type: "refusal" }], [{ type: "output_text", text: [] }]],
  },
  {
    at: ["tools"],
    kinds: ["array", "null"],
    bad: [[1], [{}], [{ type: "function" }], [{ type: "web_search" }], [{ type: "function", name: "" }]],
  },
  { at: ["tools", 0, "type"], kinds: ["string"], oneOf: ["function"] },
  { at: ["tools", 0, "name"], kinds: ["string"], bad: [""] },
  { at: ["tools", 0, "description"], kinds: ["string", "null"] },
  { at: ["tools", 0, "parameters"], kinds: ["object", "null"] },
  { at: ["tools", 0, "strict"], kinds: ["boolean", "null"] },
  {
    at: ["tool_choice"],
    kinds: ["string", "object", "null"],
    oneOf: ["auto", "none", "required"],
    bad: [{ type: "function" }, { type: "function", name: "" }, { type: "web_search" }],
  },
  { at: ["parallel_tool_calls"], kinds: ["boolean", "null"] },
  { at: ["max_output_tokens"], kinds: ["number", "null"], numbers: "positive", bad: [0, -5, 1e300] },
  { at: ["temperature"], kinds: ["number", "null"], numbers: "finite", bad: [INF] },
  { at: ["top_p"], kinds: ["number", "null"], numbers: "finite", bad: [INF] },
  { at: ["text"], kinds: ["object", "null"] },
  {
    at: ["text", "format"],
    kinds: ["object", "null"],
    bad: [{}, { type: "json_schema" }, { type: "json_schema", name: "x" }, {
      type: "json_schema",
      schema: 5,
    }],
  },
  { at: ["text", "format", "type"], kinds: ["string"], oneOf: ["text", "json_object", "json_schema"] },
  { at: ["reasoning"], kinds: ["object", "null"] },
  {
    at: ["reasoning", "effort"],
    kinds: ["string", "null"],
    oneOf: ["none", "minimal", "low", "medium", "high", "xhigh", "max"],
  },
  { at: ["reasoning", "summary"], kinds: ["string", "null"], oneOf: ["auto", "concise", "detailed"] },
  { at: ["stream"], kinds: ["boolean", "null"] },
  { at: ["store"], kinds: ["boolean", "null"] },
  // What needs stored state: refused whatever it holds (an empty id names nothing, so it is let through).
  { at: ["previous_response_id"], kinds: ["string", "null"], bad: ["resp_123", "x"] },
  { at: ["background"], kinds: ["boolean", "null"], bad: [true] },
  { at: ["conversation"], kinds: ["null"] },
  { at: ["prompt"], kinds: ["null"] },
];

/** List fields with a good and a bad item each, for giant lists. */
export const RESPONSES_LISTS: BodyContract["lists"] = [
  { at: ["input"], good: '{"role":"user","content":"hi"}', bad: '{"role":"wizard","content":"hi"}' },
  { at: ["input"], good: '{"role":"user","content":"hi"}', bad: '{"type":"item_reference","id":"msg_1"}' },
  { at: [...PARTS], good: '{"type":"input_text","text":"x"}', bad: '{"type":"video"}' },
  { at: [...REASONING, "summary"], good: '{"type":"summary_text","text":"x"}', bad: '{"type":"x"}' },
  { at: [...OUTPUT, "output"], good: '{"type":"input_text","text":"x"}', bad: '{"type":"input_file"}' },
  { at: ["tools"], good: '{"type":"function","name":"f"}', bad: '{"type":"function"}' },
];

/** The Responses API's body contract, for tests/support/hostile_contract.ts. */
export const RESPONSES_CONTRACT: BodyContract = {
  paths: RESPONSES_PATHS,
  valid: validResponsesBody,
  rules: RESPONSES_FIELD_RULES,
  image: {
    at: [...PARTS, 1, "image_url"],
    bad: fc.oneof(
      fc.constantFrom(...BAD_RESPONSE_IMAGES),
      fc.tuple(
        fc.base64String({ minLength: 4, maxLength: 40 }),
        fc.constantFrom(..."!#$%&*,.:;<>?@^`|~"),
        fc.nat(),
      )
        .map(([b64, junk, at]) => {
          const i = at % (b64.length + 1);
          return `data:image/png;base64,${b64.slice(0, i)}${junk}${b64.slice(i)}`;
        }),
      fc.webUrl(),
    ),
  },
  lists: RESPONSES_LISTS,
  padded: (text) => ({ ...validResponsesBody(), input: text }),
};
