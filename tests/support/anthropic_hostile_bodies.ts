/**
 * The body contract of Anthropic's Messages API for the hostile-input property: one rich body every
 * /v1/messages path serves (system blocks, an image, thinking, a tool call and its result, a tool, the tool
 * choice, thinking, JSON output, sampling), and for each field of it the values the face refuses. Mutating one
 * field at a time keeps every generated request one mistake away from a good one.
 */
import fc from "fast-check";
import { BAD_IMAGES, type FieldRule, PNG, RawJson } from "./hostile_bodies.ts";
import type { BodyContract } from "./hostile_contract.ts";

export const ANTHROPIC_PATHS = ["/v1/messages", "/api/v1/messages"] as const;

export function validMessagesBody(): Record<string, unknown> {
  return {
    model: "any",
    max_tokens: 64,
    system: [{ type: "text", text: "Be brief.", cache_control: { type: "ephemeral" } }],
    messages: [
      {
        role: "user",
        content: [
          { type: "text", text: "What is this?" },
          { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } },
        ],
      },
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: "Look first.", signature: "c2ln" },
          { type: "text", text: "Let me look." },
          { type: "tool_use", id: "call_1", name: "look", input: { x: 1 } },
        ],
      },
      {
        role: "user",
        content: [
          {
            type: "tool_result",
            tool_use_id: "call_1",
            content: [{ type: "text", text: "a cat" }],
            is_error: false,
          },
          { type: "text", text: "And now?" },
        ],
      },
      { role: "assistant", content: "A cat." },
      { role: "user", content: "hello there" },
    ],
    tools: [{ name: "look", description: "Looks", input_schema: { type: "object", properties: {} } }],
    tool_choice: { type: "auto", disable_parallel_tool_use: false },
    thinking: { type: "enabled", budget_tokens: 1024 },
    output_config: { effort: "low", format: { type: "json_schema", schema: { type: "object" } } },
    stop_sequences: ["</end>"],
    temperature: 0.5,
    top_p: 0.9,
    top_k: 40,
    stream: false,
    metadata: { user_id: "u1" },
  };
}

const INF = new RawJson("1e999");
const IMAGE = ["messages", 0, "content", 1];
const THINKING = ["messages", 1, "content", 0];
const CALL = ["messages", 1, "content", 2];
const RESULT = ["messages", 2, "content", 0];
const USER = ["messages", 4];

/** Every field of the body, with what it refuses. */
export const ANTHROPIC_FIELD_RULES: readonly FieldRule[] = [
  { at: ["model"], kinds: ["string"] },
  { at: ["max_tokens"], kinds: ["number"], numbers: "positive", bad: [0, -5, 1e300, INF] },
  { at: ["messages"], kinds: ["array"], bad: [[]] },
  { at: [...USER], kinds: ["object"], bad: [{}, { content: "no role" }, { role: "user" }] },
  {
    at: [...USER, "role"],
    kinds: ["string"],
    oneOf: ["user", "assistant", "system"],
    bad: ["", "User", "tool", "developer", " user"],
  },
  {
    at: [...USER, "content"],
    kinds: ["string", "array"],
    bad: [[1], [null], ["text"], [{}], [{ type: "text" }], [{ type: "video" }], [{ type: "document" }]],
  },
  // A user's text block: any other type lacks its own fields, is an assistant's, or is not served.
  { at: ["messages", 0, "content", 0, "type"], kinds: ["string"], oneOf: ["text"] },
  { at: ["messages", 0, "content", 0, "text"], kinds: ["string"] },
  {
    at: [...IMAGE, "source"],
    kinds: ["object"],
    bad: [
      {},
      { type: "url", url: "https://example.com/cat.png" },
      { type: "url", url: "http://169.254.169.254/latest/meta-data/" },
      { type: "file", file_id: "file_1" },
      { type: "base64" },
      { type: "base64", media_type: "image/png" },
    ],
  },
  { at: [...IMAGE, "source", "type"], kinds: ["string"], oneOf: ["base64"] },
  {
    at: [...IMAGE, "source", "media_type"],
    kinds: ["string"],
    oneOf: ["image/jpeg", "image/png", "image/gif", "image/webp"],
  },
  { at: [...THINKING, "thinking"], kinds: ["string"] },
  {
    at: [...CALL],
    kinds: ["object"],
    bad: [
      { type: "tool_use" },
      { type: "tool_use", id: "", name: "f", input: {} },
      { type: "tool_use", id: "a", name: "", input: {} },
      { type: "tool_use", id: "a", name: "f", input: [] },
      { type: "tool_use", id: "a", name: "f", input: "{}" },
      { type: "tool_result", tool_use_id: "a" },
      { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } },
    ],
  },
  { at: [...CALL, "id"], kinds: ["string"], bad: [""] },
  { at: [...CALL, "name"], kinds: ["string"], bad: [""] },
  { at: [...CALL, "input"], kinds: ["object"] },
  { at: [...RESULT, "tool_use_id"], kinds: ["string"], bad: [""] },
  {
    at: [...RESULT, "content"],
    kinds: ["string", "array"],
    bad: [[1], [{ type: "tool_use" }], [{
      type: "image",
      source: { type: "url", url: "https://example.com/x" },
    }]],
  },
  { at: [...RESULT, "is_error"], kinds: ["boolean"] },
  { at: ["system"], kinds: ["string", "array"], bad: [[1], [{ type: "image" }], [{ type: "text" }]] },
  { at: ["stop_sequences"], kinds: ["array"], bad: [[1], [null], [["x"]]] },
  ...["temperature", "top_p"].map((f): FieldRule => ({
    at: [f],
    kinds: ["number"],
    numbers: "finite",
    bad: [INF],
  })),
  { at: ["top_k"], kinds: ["number"], numbers: "int", bad: [1e300] },
  { at: ["stream"], kinds: ["boolean"] },
  {
    at: ["tools"],
    kinds: ["array"],
    bad: [
      [1],
      [{}],
      [{ name: "" }],
      [{ name: "f" }],
      [{ name: "f", input_schema: [] }],
      [{ type: "web_search_20250305", name: "web_search" }],
    ],
  },
  { at: ["tools", 0, "name"], kinds: ["string"], bad: [""] },
  { at: ["tools", 0, "description"], kinds: ["string"] },
  { at: ["tools", 0, "input_schema"], kinds: ["object"] },
  {
    at: ["tool_choice"],
    kinds: ["object"],
    bad: [{}, { type: "tool" }, { type: "tool", name: "" }, { type: "function", function: { name: "f" } }],
  },
  { at: ["tool_choice", "type"], kinds: ["string"], oneOf: ["auto", "any", "none"] },
  {
    at: ["thinking"],
    kinds: ["object"],
    bad: [{}, { type: "enabled" }, { type: "enabled", budget_tokens: 0 }],
  },
  {
    at: ["thinking", "type"],
    kinds: ["string"],
    oneOf: ["enabled", "disabled", "adaptive", "between_tools"],
  },
  { at: ["thinking", "budget_tokens"], kinds: ["number"], numbers: "positive", bad: [1e300] },
  {
    at: ["output_config"],
    kinds: ["object"],
    bad: [{ effort: "extreme" }, { format: { type: "json_object" } }],
  },
  {
    at: ["output_config", "effort"],
    kinds: ["string", "null"],
    oneOf: ["low", "medium", "high", "xhigh", "max"],
  },
  {
    at: ["output_config", "format"],
    kinds: ["object", "null"],
    bad: [{}, { type: "json_schema" }, { type: "json_schema", schema: 5 }],
  },
];

const JUNK = [..."!#$%&()*,.:;<>?@[]^`{|}~\"'"];
const NON_IMAGE_TYPES = ["text", "application", "audio", "video", "font", "model", "multipart", "message"];

export const ANTHROPIC_CONTRACT: BodyContract = {
  paths: ANTHROPIC_PATHS,
  valid: validMessagesBody,
  rules: ANTHROPIC_FIELD_RULES,
  image: {
    at: [...IMAGE, "source", "data"],
    bad: fc.oneof(
      fc.constantFrom(...BAD_IMAGES),
      fc.tuple(fc.base64String({ minLength: 4, maxLength: 40 }), fc.constantFrom(...JUNK), fc.nat()).map(
        ([b64, junk, at]) => b64.slice(0, at % (b64.length + 1)) + junk + b64.slice(at % (b64.length + 1)),
      ),
      fc.tuple(fc.constantFrom(...NON_IMAGE_TYPES), fc.stringMatching(/^[a-z0-9.+-]{1,16}$/))
        .map(([type, sub]) => `data:${type}/${sub};base64,${PNG}`),
    ),
  },
  lists: [
    { at: ["messages"], good: '{"role":"user","content":"hi"}', bad: '{"role":"wizard","content":"hi"}' },
    { at: ["stop_sequences"], good: '"x"', bad: "1" },
    { at: ["system"], good: '{"type":"text","text":"x"}', bad: '{"type":"image"}' },
    { at: ["messages", 0, "content"], good: '{"type":"text","text":"x"}', bad: '{"type":"video"}' },
    { at: [...RESULT, "content"], good: '{"type":"text","text":"x"}', bad: '{"type":"tool_use"}' },
    { at: ["tools"], good: '{"name":"f","input_schema":{}}', bad: '{"name":""}' },
  ],
  padded: (text) => ({ ...validMessagesBody(), messages: [{ role: "user", content: text }] }),
};
