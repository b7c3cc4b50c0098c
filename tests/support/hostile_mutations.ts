/**
 * Generators of malformed chat bodies that stay close to a valid one: a field given a value of a kind it does
 * not take, a closed-set field given another string, a number out of its range, a bad image, or an extreme
 * (deep nesting, a giant array, a huge string) put where the contract refuses it. Every value generated here
 * is refused by the contract on its own, so a body carrying one or two of them must be refused.
 */
import fc from "fast-check";
import {
  BAD_IMAGES,
  FIELD_RULES,
  fieldName,
  type FieldRule,
  type JsonKind,
  PNG,
  RawJson,
  validBody,
  withField,
} from "./hostile_bodies.ts";

export type BodyCategory =
  | "wrong-kind"
  | "bad-value"
  | "bad-image"
  | "deep-nesting"
  | "giant-array"
  | "huge-string";

export interface BodyMutation {
  category: BodyCategory;
  /** What was done, short enough for a failure report. */
  label: string;
  body: Record<string, unknown>;
}

const ALL_KINDS: readonly JsonKind[] = ["null", "boolean", "number", "string", "array", "object"];

const OF_KIND: Record<JsonKind, fc.Arbitrary<unknown>> = {
  null: fc.constant(null),
  boolean: fc.boolean(),
  number: fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true })),
  string: fc.string({ maxLength: 24 }),
  array: fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 4 }),
  object: fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 4 }),
};

/** Values the rule refuses, each tagged with how it breaks the field. */
function refusedBy(rule: FieldRule): fc.Arbitrary<{ category: BodyCategory; value: unknown }>[] {
  const wrongKinds = ALL_KINDS.filter((k) => !rule.kinds.includes(k));
  const out: fc.Arbitrary<{ category: BodyCategory; value: unknown }>[] = [
    fc.constantFrom(...wrongKinds).chain((k) => OF_KIND[k]).map((value) => ({
      category: "wrong-kind",
      value,
    })),
  ];
  const oneOf = rule.oneOf;
  const bad: fc.Arbitrary<unknown>[] = [];
  if (rule.bad?.length) bad.push(fc.constantFrom(...rule.bad));
  if (oneOf) bad.push(fc.string({ maxLength: 16 }).filter((s) => !oneOf.includes(s)));
  if (rule.numbers === "int" || rule.numbers === "positive") {
    bad.push(fc.double({ min: -1e6, max: 1e6, noNaN: true }).filter((x) => !Number.isInteger(x)));
  }
  if (rule.numbers === "positive") bad.push(fc.integer({ min: -1e9, max: 0 }));
  if (bad.length) out.push(fc.oneof(...bad).map((value) => ({ category: "bad-value", value })));
  return out;
}

const fieldMutation: fc.Arbitrary<
  { category: BodyCategory; label: string; at: FieldRule["at"]; value: unknown }
> = fc.constantFrom(...FIELD_RULES).chain((rule) =>
  fc.oneof(...refusedBy(rule)).map(({ category, value }) => ({
    category,
    label: `${fieldName(rule.at)} = ${describe(value)}`,
    at: rule.at,
    value,
  }))
);

function describe(value: unknown): string {
  const text = value instanceof RawJson ? value.text : JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 60)}… (${text.length} chars)` : text;
}

/** One or two refused field values in an otherwise valid body. */
export const fieldMutations: fc.Arbitrary<BodyMutation> = fc.array(fieldMutation, {
  minLength: 1,
  maxLength: 2,
})
  .map((changes) => ({
    category: changes[0].category,
    label: changes.map((c) => c.label).join("; "),
    body: changes.reduce((body, c) => withField(body, c.at, c.value), validBody()),
  }));

const JUNK = [..."!#$%&()*,.:;<>?@[]^`{|}~\"'"];
const NON_IMAGE_TYPES = ["text", "application", "audio", "video", "font", "model", "multipart", "message"];

const badImage: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...BAD_IMAGES),
  fc.tuple(fc.base64String({ minLength: 4, maxLength: 40 }), fc.constantFrom(...JUNK), fc.nat())
    .map(([b64, junk, at]) => b64.slice(0, at % (b64.length + 1)) + junk + b64.slice(at % (b64.length + 1))),
  fc.tuple(fc.constantFrom(...NON_IMAGE_TYPES), fc.stringMatching(/^[a-z0-9.+-]{1,16}$/))
    .map(([type, sub]) => `data:${type}/${sub};base64,${PNG}`),
);

/** A refused image in a format-B `images` list or, for data: URIs, in a chat-completions image part. */
export const imageMutations: fc.Arbitrary<BodyMutation> = fc.tuple(badImage, fc.boolean()).map(
  ([image, asPart]) => {
    const inPart = asPart && image.startsWith("data:");
    const at = inPart ? ["messages", 1, "content", 1, "image_url", "url"] : ["messages", 1, "images", 1];
    return {
      category: "bad-image",
      label: `${fieldName(at)} = ${describe(image)}`,
      body: withField(validBody(), at, image),
    };
  },
);

const refusesKind = (kind: JsonKind) => FIELD_RULES.filter((r) => !r.kinds.includes(kind));

/** Arrays or objects nested thousands deep, where the field takes no such value. */
const deepNesting: fc.Arbitrary<BodyMutation> = fc.tuple(fc.integer({ min: 500, max: 50_000 }), fc.boolean())
  .chain(([depth, arrays]) =>
    fc.constantFrom(...refusesKind(arrays ? "array" : "object")).map((rule) => {
      const text = arrays
        ? "[".repeat(depth) + "]".repeat(depth)
        : '{"a":'.repeat(depth) + "1" + "}".repeat(depth);
      return {
        category: "deep-nesting" as const,
        label: `${fieldName(rule.at)} = ${arrays ? "arrays" : "objects"} nested ${depth} deep`,
        body: withField(validBody(), rule.at, new RawJson(text)),
      };
    })
  );

/** List fields and an item each refuses; a giant list of them, or of good items with one bad at the end. */
const LISTS: readonly { at: (string | number)[]; good: string; bad: string }[] = [
  { at: ["messages"], good: '{"role":"user","content":"hi"}', bad: '{"role":"wizard","content":"hi"}' },
  { at: ["stop"], good: '"x"', bad: "1" },
  { at: ["options", "stop"], good: '"x"', bad: "{}" },
  { at: ["messages", 1, "images"], good: `"${PNG}"`, bad: '"***"' },
  { at: ["messages", 1, "content"], good: '{"type":"text","text":"x"}', bad: '{"type":"video"}' },
  { at: ["messages", 2, "tool_calls"], good: '{"function":{"name":"f"}}', bad: '{"function":{"name":""}}' },
  { at: ["tools"], good: '{"type":"function","function":{"name":"f"}}', bad: '{"type":"function"}' },
];

const giantArray: fc.Arbitrary<BodyMutation> = fc.tuple(
  fc.constantFrom(...LISTS),
  fc.integer({ min: 1_000, max: 120_000 }),
  fc.boolean(),
).map(([list, n, allBad]) => {
  const items = allBad ? Array(n).fill(list.bad) : [...Array(n - 1).fill(list.good), list.bad];
  return {
    category: "giant-array",
    label: `${fieldName(list.at)} = ${n} items, ${allBad ? "all bad" : "the last bad"}`,
    body: withField(validBody(), list.at, new RawJson(`[${items.join(",")}]`)),
  };
});

/** A huge string as a closed-set value, as a value of the wrong kind, or as an image that is not base64. */
const hugeString: fc.Arbitrary<BodyMutation> = fc.tuple(
  fc.integer({ min: 10_000, max: 400_000 }),
  fc.constantFrom(...FIELD_RULES.filter((r) => r.oneOf || !r.kinds.includes("string")), "image" as const),
).map(([size, where]) => {
  const at = where === "image" ? ["messages", 1, "images", 0] : where.at;
  const value = where === "image" ? `!${"A".repeat(size)}` : "x".repeat(size);
  return {
    category: "huge-string",
    label: `${fieldName(at)} = a string of ${size} chars`,
    body: withField(validBody(), at, value),
  };
});

export const extremeMutations: fc.Arbitrary<BodyMutation> = fc.oneof(deepNesting, giantArray, hugeString);
