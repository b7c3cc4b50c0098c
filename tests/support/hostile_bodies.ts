/**
 * The material hostile-input tests build from: one rich chat body that is valid on every path, and for each
 * field of it the values the request contract (spec §2.1) refuses. Mutating the valid body one field at a
 * time keeps every generated request one mistake away from a good one, which is where parsers slip.
 */

/** A tiny real PNG header, enough to be well-formed base64 image data. */
export const PNG = "iVBORw0KGgo=";

export type PathPart = string | number;

/** JSON text that JSON.stringify cannot produce (1e999, literal nesting built as text), spliced in as is. */
export class RawJson {
  constructor(readonly text: string) {}
}

export type JsonKind = "null" | "boolean" | "number" | "string" | "array" | "object";

export function kindOf(value: unknown): JsonKind {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value as JsonKind;
}

export interface FieldRule {
  /** Where the field sits in `validBody()`. */
  at: PathPart[];
  /** The JSON kinds the field takes; a value of any other kind must be refused whatever it holds. */
  kinds: JsonKind[];
  /** A closed set: any other string is refused. */
  oneOf?: readonly string[];
  /** What a number must also be: a fraction breaks "int", and zero or less breaks "positive". */
  numbers?: "finite" | "int" | "positive";
  /** Further refused values of an accepted kind. */
  bad?: unknown[];
}

export function validBody(): Record<string, unknown> {
  return {
    model: "any",
    messages: [
      { role: "system", content: "Be brief." },
      {
        role: "user",
        content: [
          { type: "text", text: "What is this?" },
          { type: "image_url", image_url: { url: `data:image/png;base64,${PNG}`, detail: "low" } },
        ],
        images: [PNG],
      },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "call_1", type: "function", function: { name: "look", arguments: '{"x":1}' } }],
      },
      { role: "tool", tool_call_id: "call_1", content: '{"seen":true}' },
      { role: "user", content: "hello there" },
    ],
    stream: false,
    stream_options: { include_usage: false },
    temperature: 0.5,
    top_p: 0.9,
    top_k: 40,
    seed: 7,
    stop: ["</end>"],
    max_tokens: 64,
    options: { num_ctx: 2048, repeat_penalty: 1.1 },
    reasoning_effort: "low",
    response_format: { type: "json_object" },
    tools: [{
      type: "function",
      function: { name: "look", description: "Looks", parameters: { type: "object", properties: {} } },
    }],
    tool_choice: "auto",
    keep_alive: "5m",
  };
}

const INF = new RawJson("1e999");
const FINITE = ["temperature", "top_p", "min_p", "repeat_penalty", "presence_penalty", "frequency_penalty"];
const INTS = ["top_k", "seed", "num_predict"];

function optionRules(prefix: PathPart[]): FieldRule[] {
  return [
    ...FINITE.map((f): FieldRule => ({
      at: [...prefix, f],
      kinds: ["number"],
      numbers: "finite",
      bad: [INF],
    })),
    ...INTS.map((f): FieldRule => ({ at: [...prefix, f], kinds: ["number"], numbers: "int", bad: [1e300] })),
    { at: [...prefix, "num_ctx"], kinds: ["number"], numbers: "positive", bad: [0, -4096] },
    { at: [...prefix, "stop"], kinds: ["string", "array"], bad: [[1], [null], [["x"]], ["ok", {}]] },
  ];
}

const USER = ["messages", 4];
const PARTS = ["messages", 1];
const ASSISTANT = ["messages", 2];

/** Every field of the body, with what it refuses. */
export const FIELD_RULES: readonly FieldRule[] = [
  { at: ["model"], kinds: ["string"] },
  { at: ["messages"], kinds: ["array"], bad: [[]] },
  { at: [...USER], kinds: ["object"], bad: [{}, { content: "no role" }] },
  {
    at: [...USER, "role"],
    kinds: ["string"],
    oneOf: ["system", "developer", "user", "assistant", "tool"],
    bad: ["", "User", " user", "function", "system\u0000"],
  },
  { at: [...USER, "content"], kinds: ["string", "array"] },
  ...["name", "thinking", "reasoning", "reasoning_content", "tool_call_id", "tool_name"]
    .map((f): FieldRule => ({ at: [...USER, f], kinds: ["string"] })),
  {
    at: [...PARTS, "content"],
    kinds: ["string", "array"],
    bad: [
      [1],
      [null],
      ["text"],
      [{}],
      [{ type: "text" }],
      [{ type: "text", text: 5 }],
      [{ type: "image_url" }],
      [{ type: "image_url", image_url: 5 }],
      [{ type: "image_url", image_url: {} }],
      [{ type: "image_url", image_url: { url: 5 } }],
      [{ type: "image_url", image_url: { url: `data:image/png;base64,${PNG}`, detail: 5 } }],
      [{ type: "video", video: "clip" }],
    ],
  },
  { at: [...PARTS, "content", 0, "type"], kinds: ["string"], oneOf: ["text", "image_url"] },
  { at: [...PARTS, "content", 1, "image_url"], kinds: ["string", "object"] },
  { at: [...PARTS, "images"], kinds: ["array"], bad: [[1], [null], [[PNG]]] },
  { at: [...ASSISTANT, "tool_calls"], kinds: ["array"], bad: [[1], [{}], [{ function: {} }]] },
  {
    at: [...ASSISTANT, "tool_calls", 0, "function"],
    kinds: ["object"],
    bad: [
      { name: "" },
      { name: "f", arguments: 5 },
      { name: "f", arguments: "[1]" },
      { name: "f", arguments: "{bad" },
      { name: "f", arguments: '"just a string"' },
    ],
  },
  { at: [...ASSISTANT, "tool_calls", 0, "id"], kinds: ["string"] },
  { at: [...ASSISTANT, "tool_calls", 0, "type"], kinds: ["string"], oneOf: ["function"] },
  { at: ["stream"], kinds: ["boolean"] },
  { at: ["stream_options"], kinds: ["object", "null"] },
  { at: ["stream_options", "include_usage"], kinds: ["boolean"] },
  ...["max_tokens", "max_completion_tokens"].map((f): FieldRule => ({
    at: [f],
    kinds: ["number", "null"],
    numbers: "positive",
    bad: [0, -5, 1e300],
  })),
  ...optionRules([]),
  { at: ["options"], kinds: ["object"] },
  ...optionRules(["options"]),
  {
    at: ["reasoning_effort"],
    kinds: ["string", "null"],
    oneOf: ["none", "minimal", "low", "medium", "high", "xhigh", "max"],
  },
  { at: ["think"], kinds: ["boolean", "string"], oneOf: ["low", "medium", "high", "max"] },
  {
    at: ["response_format"],
    kinds: ["object"],
    bad: [{}, { type: "json_schema" }, { type: "json_schema", json_schema: { schema: 5 } }],
  },
  { at: ["response_format", "type"], kinds: ["string"], oneOf: ["text", "json_object", "json_schema"] },
  { at: ["format"], kinds: ["string", "object"], oneOf: ["json", ""] },
  { at: ["tools"], kinds: ["array"], bad: [[1], [{}], [{ type: "function" }]] },
  {
    at: ["tools", 0, "function"],
    kinds: ["object"],
    bad: [{ name: "" }, { name: "f", parameters: [] }, { name: "f", parameters: "{}" }, {
      name: "f",
      description: 5,
    }],
  },
  { at: ["tools", 0, "type"], kinds: ["string"], oneOf: ["function"] },
  {
    at: ["tool_choice"],
    kinds: ["string", "object"],
    oneOf: ["auto", "none", "required"],
    bad: [{ type: "function" }, { type: "function", function: { name: "" } }, {
      type: "tool",
      function: { name: "f" },
    }],
  },
  { at: ["keep_alive"], kinds: ["number", "string"], bad: ["forever", "5 m", "", "5mm", "-", INF] },
];

/** Image values that must be refused wherever an image goes, never forwarded: not base64, or not an image. */
export const BAD_IMAGES: readonly string[] = [
  "",
  "***",
  "abcde", // a length no base64 text can have
  "aGk=aGk=", // padding in the middle
  "data:",
  "data:image/png,iVBORw0KGgo", // not marked base64
  "data:image/png;base64,",
  "data:image/png;base64,***",
  "data:text/plain;base64,aGk=",
  "data:text/html;base64,PHNjcmlwdD4=",
  "data:application/pdf;base64,JVBERi0xLjQ=",
  "data:application/octet-stream;base64,AAAA",
  "data:image;base64,AAAA", // a type without a subtype
  "data:image/svg+xml<script>;base64,AAAA",
];

/** A deep copy of `body` with the value at `at` replaced (parents are created when missing). */
export function withField(
  body: Record<string, unknown>,
  at: PathPart[],
  value: unknown,
): Record<string, unknown> {
  const copy = structuredClone(body);
  let node = copy as Record<PathPart, unknown>;
  for (const part of at.slice(0, -1)) {
    if (typeof node[part] !== "object" || node[part] === null) node[part] = {};
    node = node[part] as Record<PathPart, unknown>;
  }
  node[at[at.length - 1]] = value;
  return copy;
}

/** JSON text of a body that may hold RawJson values. */
export function toJsonText(body: unknown): string {
  const raws: string[] = [];
  const text = JSON.stringify(body, (_key, value) => {
    if (!(value instanceof RawJson)) return value;
    raws.push(value.text);
    return `\u0000raw${raws.length - 1}\u0000`;
  });
  // JSON.stringify escapes a real NUL, so only the placeholders carry the literal "\u0000" sequence.
  return text.replace(/"\\u0000raw(\d+)\\u0000"/g, (_m, i) => raws[Number(i)]);
}

/** Dotted name of a field path, for test names: messages[4].role. */
export function fieldName(at: PathPart[]): string {
  return at.map((p, i) => typeof p === "number" ? `[${p}]` : i ? `.${p}` : p).join("");
}
