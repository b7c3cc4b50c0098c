/**
 * Hostile requests for the Responses API's paths, built as hostile_requests.ts builds them for the chat paths:
 * one or two refused field values in the valid body, a refused image, extremes (deep nesting, giant lists,
 * huge strings) where the body refuses them, byte-level damage to the valid body's text, wrong content types
 * and a valid body past the size limit. Each knows the status the contract gives it: 415 for the type, else 413
 * past the size limit, else 400.
 */
import fc from "fast-check";
import {
  fieldName,
  type FieldRule,
  type JsonKind,
  RawJson,
  toJsonText,
  withField,
} from "./hostile_bodies.ts";
import {
  BAD_RESPONSE_IMAGES,
  RESPONSES_FIELD_RULES,
  RESPONSES_IMAGE_AT,
  RESPONSES_LISTS,
  RESPONSES_PATHS,
  validResponsesBody,
} from "./responses_hostile_bodies.ts";

export interface ResponsesHostileRequest {
  category: string;
  label: string;
  path: string;
  contentType: string | null;
  bytes: Uint8Array<ArrayBuffer>;
  expect: 400 | 413 | 415;
}

interface Damage {
  category: string;
  label: string;
  bytes: Uint8Array<ArrayBuffer>;
  contentType?: string | null;
}

const encode = (text: string) => new TextEncoder().encode(text);
const VALID_TEXT = toJsonText(validResponsesBody());
const ALL_KINDS: readonly JsonKind[] = ["null", "boolean", "number", "string", "array", "object"];

const OF_KIND: Record<JsonKind, fc.Arbitrary<unknown>> = {
  null: fc.constant(null),
  boolean: fc.boolean(),
  number: fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true })),
  string: fc.string({ maxLength: 24 }),
  array: fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 4 }),
  object: fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 4 }),
};

function describe(value: unknown): string {
  const text = value instanceof RawJson ? value.text : JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 60)}… (${text.length} chars)` : text;
}

function body(category: string, changes: { at: FieldRule["at"]; value: unknown }[]): Damage {
  const mutated = changes.reduce((b, c) => withField(b, c.at, c.value), validResponsesBody());
  const label = changes.map((c) => `${fieldName(c.at)} = ${describe(c.value)}`).join("; ");
  return { category, label, bytes: encode(toJsonText(mutated)) };
}

/** Values a rule refuses, each tagged with how it breaks the field. */
function refusedBy(rule: FieldRule): fc.Arbitrary<{ category: string; value: unknown }> {
  const wrongKinds = ALL_KINDS.filter((k) => !rule.kinds.includes(k));
  const out = [
    fc.constantFrom(...wrongKinds).chain((k) => OF_KIND[k]).map((value) => ({
      category: "wrong-kind",
      value,
    })),
  ];
  const bad: fc.Arbitrary<unknown>[] = [];
  if (rule.bad?.length) bad.push(fc.constantFrom(...rule.bad));
  const oneOf = rule.oneOf;
  if (oneOf) bad.push(fc.string({ maxLength: 16 }).filter((s) => !oneOf.includes(s)));
  if (rule.numbers === "positive") {
    bad.push(fc.double({ min: -1e6, max: 1e6, noNaN: true }).filter((x) => !Number.isInteger(x)));
    bad.push(fc.integer({ min: -1e9, max: 0 }));
  }
  if (bad.length) out.push(fc.oneof(...bad).map((value) => ({ category: "bad-value", value })));
  return fc.oneof(...out);
}

const fieldMutations: fc.Arbitrary<Damage> = fc.array(
  fc.constantFrom(...RESPONSES_FIELD_RULES).chain((rule) =>
    refusedBy(rule).map(({ category, value }) => ({ category, at: rule.at, value }))
  ),
  { minLength: 1, maxLength: 2 },
).map((changes) => body(changes[0].category, changes));

const JUNK = [..."!#$%&()*,.:;<>?@[]^`{|}~\"'"];
const badImage: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...BAD_RESPONSE_IMAGES),
  fc.tuple(fc.base64String({ minLength: 4, maxLength: 40 }), fc.constantFrom(...JUNK), fc.nat())
    .map(([b64, junk, at]) => {
      const i = at % (b64.length + 1);
      return `data:image/png;base64,${b64.slice(0, i)}${junk}${b64.slice(i)}`;
    }),
  fc.webUrl().map((url) => url),
);
const imageMutations = badImage.map((image) => body("bad-image", [{ at: RESPONSES_IMAGE_AT, value: image }]));

const refusesKind = (kind: JsonKind) => RESPONSES_FIELD_RULES.filter((r) => !r.kinds.includes(kind));

const deepNesting = fc.tuple(fc.integer({ min: 500, max: 50_000 }), fc.boolean()).chain(([depth, arrays]) =>
  fc.constantFrom(...refusesKind(arrays ? "array" : "object")).map((rule) => {
    const text = arrays
      ? "[".repeat(depth) + "]".repeat(depth)
      : '{"a":'.repeat(depth) + "1" + "}".repeat(depth);
    return body("deep-nesting", [{ at: rule.at, value: new RawJson(text) }]);
  })
);

const giantArray = fc.tuple(
  fc.constantFrom(...RESPONSES_LISTS),
  fc.integer({ min: 1_000, max: 100_000 }),
  fc.boolean(),
)
  .map(([list, n, allBad]) => {
    const items = allBad ? Array(n).fill(list.bad) : [...Array(n - 1).fill(list.good), list.bad];
    return body("giant-array", [{ at: list.at, value: new RawJson(`[${items.join(",")}]`) }]);
  });

const hugeString = fc.tuple(
  fc.integer({ min: 10_000, max: 400_000 }),
  fc.constantFrom(
    ...RESPONSES_FIELD_RULES.filter((r) => r.oneOf || !r.kinds.includes("string")),
    "image" as const,
  ),
).map(([size, where]) =>
  where === "image"
    ? body("huge-string", [{ at: RESPONSES_IMAGE_AT, value: `data:image/png;base64,!${"A".repeat(size)}` }])
    : body("huge-string", [{ at: where.at, value: "x".repeat(size) }])
);

function splice(text: string, at: number, insert: Uint8Array): Uint8Array<ArrayBuffer> {
  const bytes = encode(text);
  const i = at % (bytes.length + 1);
  return new Uint8Array([...bytes.subarray(0, i), ...insert, ...bytes.subarray(i)]);
}

const CONTROL = [...Array(32).keys()].filter((c) => c !== 9 && c !== 10 && c !== 13);
const INVALID_UTF8 = [[0x80], [0xbf], [0xc0, 0xaf], [0xc1, 0x81], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0xf5], [
  0xff,
]];
const NOT_JSON: readonly [string, (text: string) => string][] = [
  ["single quotes", (t) => t.replaceAll('"', "'")],
  ["trailing comma", (t) => t.slice(0, -1) + ",}"],
  ["NaN literal", (t) => t.replace('"temperature":0.5', '"temperature":NaN')],
  ["leading zero", (t) => t.replace('"max_output_tokens":64', '"max_output_tokens":064')],
  ["hex number", (t) => t.replace('"max_output_tokens":64', '"max_output_tokens":0x40')],
  ["comment", (t) => `/* hi */${t}`],
  ["unquoted key", (t) => t.replace('"input":', "input:")],
  ["two bodies", (t) => t + t],
];

const junk: fc.Arbitrary<Damage> = fc.oneof(
  fc.nat({ max: VALID_TEXT.length - 1 }).map((n) => ({
    category: "truncated",
    label: `the first ${n} of ${VALID_TEXT.length} characters`,
    bytes: encode(VALID_TEXT.slice(0, n)),
  })),
  fc.tuple(fc.constantFrom(...CONTROL), fc.nat()).map(([c, at]) => ({
    category: "control-char",
    label: `byte 0x${c.toString(16)} inserted at ${at % (VALID_TEXT.length + 1)}`,
    bytes: splice(VALID_TEXT, at, new Uint8Array([c])),
  })),
  fc.tuple(fc.constantFrom(...INVALID_UTF8), fc.nat()).map(([seq, at]) => ({
    category: "invalid-utf8",
    label: `bytes ${seq.map((b) => b.toString(16)).join(" ")} inserted at ${at % (VALID_TEXT.length + 1)}`,
    bytes: splice(VALID_TEXT, at, new Uint8Array(seq)),
  })),
  fc.tuple(fc.constantFrom(..."}]),:x<#'"), fc.string({ maxLength: 40 })).map(([first, rest]) => ({
    category: "trailing-junk",
    label: `${JSON.stringify(first + rest)} after the body`,
    bytes: encode(VALID_TEXT + first + rest),
  })),
  fc.constantFrom(...NOT_JSON).map(([name, rewrite]) => ({
    category: "not-json",
    label: name,
    bytes: encode(rewrite(VALID_TEXT)),
  })),
  fc.jsonValue({ maxDepth: 3 }).filter((v) => typeof v !== "object" || v === null || Array.isArray(v)).map((
    v,
  ) => ({
    category: "not-object",
    label: `body ${JSON.stringify(v).slice(0, 60)}`,
    bytes: encode(JSON.stringify(v)),
  })),
);

const wrongType: fc.Arbitrary<Damage> = fc.constantFrom(
  null,
  "",
  "text/plain",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  "application/jsonp",
  "application/xml",
  "application/octet-stream",
  "*/*",
).map((contentType) => ({
  category: "content-type",
  label: `Content-Type ${JSON.stringify(contentType)}`,
  bytes: encode(VALID_TEXT),
  contentType,
}));

function overLimit(maxBodyBytes: number): fc.Arbitrary<Damage> {
  return fc.integer({ min: 1, max: maxBodyBytes }).map((extra) => {
    const text = toJsonText({ ...validResponsesBody(), input: "x".repeat(maxBodyBytes + extra) });
    return { category: "over-limit", label: `a valid body of ${text.length} bytes`, bytes: encode(text) };
  });
}

export function responsesHostileRequests(maxBodyBytes: number): fc.Arbitrary<ResponsesHostileRequest> {
  const damage = fc.oneof(
    { weight: 5, arbitrary: fieldMutations },
    { weight: 1, arbitrary: imageMutations },
    { weight: 1, arbitrary: fc.oneof(deepNesting, giantArray, hugeString) },
    { weight: 3, arbitrary: junk },
    { weight: 1, arbitrary: wrongType },
    { weight: 1, arbitrary: overLimit(maxBodyBytes) },
  );
  return fc.tuple(fc.constantFrom(...RESPONSES_PATHS), damage).map(([path, d]) => {
    const contentType = d.contentType === undefined ? "application/json" : d.contentType;
    const expect = d.contentType !== undefined ? 415 : d.bytes.length > maxBodyBytes ? 413 : 400;
    return { category: d.category, label: d.label, path, contentType, bytes: d.bytes, expect };
  });
}

/** Sends one hostile request; a hang fails the case instead of the run. */
export function sendHostile(baseUrl: string, key: string, r: ResponsesHostileRequest): Promise<Response> {
  const headers: Record<string, string> = { Authorization: `Bearer ${key}` };
  if (r.contentType !== null) headers["Content-Type"] = r.contentType;
  return fetch(`${baseUrl}${r.path}`, {
    method: "POST",
    headers,
    body: r.bytes,
    signal: AbortSignal.timeout(10_000),
  });
}
