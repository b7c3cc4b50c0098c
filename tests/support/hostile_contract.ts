/**
 * Hostile requests for any JSON path, given its body contract: one rich valid body, and for each field the
 * values it refuses. Built as hostile_requests.ts builds them for the chat paths: one or two refused field
 * values in the valid body, a refused image, extremes (deep nesting, giant lists, huge strings) where the body
 * refuses them, byte-level damage to the valid body's text (truncation, control characters, invalid UTF-8,
 * trailing junk, JSON that is not an object, non-JSON syntax), wrong content types, and a valid body past the
 * size limit. Each request knows the status the contract gives it: 415 for the type, else 413 past the size
 * limit, else 400. The byte damage, content types and over-limit bodies are hostile_damage.ts's, shared
 * with the chat paths' generator (hostile_requests.ts).
 */
import fc from "fast-check";
import {
  fieldName,
  type FieldRule,
  type JsonKind,
  type PathPart,
  RawJson,
  toJsonText,
  withField,
} from "./hostile_bodies.ts";
import { byteDamage, type Damage, overLimitBodies, wrongContentTypes } from "./hostile_damage.ts";

export { byteDamage, type Damage, overLimitBodies, wrongContentTypes };

export interface BodyContract {
  paths: readonly string[];
  /** A body every path serves; it holds at least one integer field, which the non-JSON rewrites spoil. */
  valid(): Record<string, unknown>;
  rules: readonly FieldRule[];
  /** Where an image's data goes, and images refused there. */
  image: { at: PathPart[]; bad: fc.Arbitrary<string> };
  /** List fields, with an item each accepts and one it refuses, as JSON text. */
  lists: readonly { at: PathPart[]; good: string; bad: string }[];
  /** A valid body whose one long string is `text`. */
  padded(text: string): Record<string, unknown>;
}

export interface ContractRequest {
  category: string;
  label: string;
  path: string;
  /** null sends no Content-Type at all. */
  contentType: string | null;
  bytes: Uint8Array<ArrayBuffer>;
  expect: 400 | 413 | 415;
}

const encode = (text: string) => new TextEncoder().encode(text);
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
  if (rule.numbers === "int" || rule.numbers === "positive") {
    bad.push(fc.double({ min: -1e6, max: 1e6, noNaN: true }).filter((x) => !Number.isInteger(x)));
  }
  if (rule.numbers === "positive") bad.push(fc.integer({ min: -1e9, max: 0 }));
  if (bad.length) out.push(fc.oneof(...bad).map((value) => ({ category: "bad-value", value })));
  return fc.oneof(...out);
}

/** The first integer value of the text, which the number rewrites spoil. */
const INTEGER = /:(\d+)([,}\]])/;
/** Rewrites of any valid text that no JSON parser accepts. */
const NOT_JSON: readonly [string, (text: string) => string][] = [
  ["single quotes", (t) => t.replaceAll('"', "'")],
  ["trailing comma", (t) => t.slice(0, -1) + ",}"],
  ["NaN literal", (t) => t.replace(INTEGER, ":NaN$2")],
  ["leading zero", (t) => t.replace(INTEGER, ":0$1$2")],
  ["hex number", (t) => t.replace(INTEGER, ":0x$1$2")],
  ["comment", (t) => `/* hi */${t}`],
  ["unquoted key", (t) => t.replace(/^\{"(\w+)":/, "{$1:")],
  ["two bodies", (t) => t + t],
];

const WRONG_TYPES = [
  null,
  "",
  "text/plain",
  "text/json",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  "application/jsonp",
  "application/json-seq",
  "application/xml",
  "application/octet-stream",
  "*/*",
];

export function contractRequests(
  contract: BodyContract,
  maxBodyBytes: number,
): fc.Arbitrary<ContractRequest> {
  const validText = toJsonText(contract.valid());
  if (!INTEGER.test(validText)) throw new Error("the valid body needs an integer field");
  const body = (category: string, changes: { at: PathPart[]; value: unknown }[]): Damage => {
    const mutated = changes.reduce((b, c) => withField(b, c.at, c.value), contract.valid());
    const label = changes.map((c) => `${fieldName(c.at)} = ${describe(c.value)}`).join("; ");
    return { category, label, bytes: encode(toJsonText(mutated)) };
  };

  const fieldMutations = fc.array(
    fc.constantFrom(...contract.rules).chain((rule) =>
      refusedBy(rule).map(({ category, value }) => ({ category, at: rule.at, value }))
    ),
    { minLength: 1, maxLength: 2 },
  ).map((changes) => body(changes[0].category, changes));

  const imageMutations = contract.image.bad.map((image) =>
    body("bad-image", [{ at: contract.image.at, value: image }])
  );

  const refusesKind = (kind: JsonKind) => contract.rules.filter((r) => !r.kinds.includes(kind));
  const deepNesting = fc.tuple(fc.integer({ min: 500, max: 50_000 }), fc.boolean()).chain(([depth, arrays]) =>
    fc.constantFrom(...refusesKind(arrays ? "array" : "object")).map((rule) => {
      const text = arrays
        ? "[".repeat(depth) + "]".repeat(depth)
        : '{"a":'.repeat(depth) + "1" + "}".repeat(depth);
      return body("deep-nesting", [{ at: rule.at, value: new RawJson(text) }]);
    })
  );
  const giantArray = fc.tuple(
    fc.constantFrom(...contract.lists),
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
      ...contract.rules.filter((r) => r.oneOf || !r.kinds.includes("string")),
      "image" as const,
    ),
  ).map(([size, where]) =>
    where === "image"
      ? body("huge-string", [{ at: contract.image.at, value: `!${"A".repeat(size)}` }])
      : body("huge-string", [{ at: where.at, value: "x".repeat(size) }])
  );

  const damage = fc.oneof(
    { weight: 5, arbitrary: fieldMutations },
    { weight: 1, arbitrary: imageMutations },
    { weight: 1, arbitrary: fc.oneof(deepNesting, giantArray, hugeString) },
    { weight: 3, arbitrary: byteDamage(validText, NOT_JSON) },
    { weight: 1, arbitrary: wrongContentTypes(validText, WRONG_TYPES) },
    { weight: 1, arbitrary: overLimitBodies(maxBodyBytes, contract.padded) },
  );
  return fc.tuple(fc.constantFrom(...contract.paths), damage).map(([path, d]) => ({
    category: d.category,
    label: d.label,
    path,
    bytes: d.bytes,
    ...sentAs(d, maxBodyBytes),
  }));
}

/** The Content-Type a damaged body goes with, and the status it is owed: 415 for the type, 413 for the size. */
export function sentAs(
  d: Damage,
  maxBodyBytes: number,
): { contentType: string | null; expect: 400 | 413 | 415 } {
  const contentType = d.contentType === undefined ? "application/json" : d.contentType;
  const expect = d.contentType !== undefined ? 415 : d.bytes.length > maxBodyBytes ? 413 : 400;
  return { contentType, expect };
}

/** Sends one hostile request with the key in `keyHeaders`; a hang fails the case instead of the run. */
export function sendContractRequest(
  baseUrl: string,
  keyHeaders: Record<string, string>,
  r: ContractRequest,
): Promise<Response> {
  const headers: Record<string, string> = { ...keyHeaders };
  if (r.contentType !== null) headers["Content-Type"] = r.contentType;
  return fetch(`${baseUrl}${r.path}`, {
    method: "POST",
    headers,
    body: r.bytes,
    signal: AbortSignal.timeout(10_000),
  });
}
