/**
 * Whole hostile requests for the property test: a public path, a Content-Type and body bytes, from the body
 * mutations plus byte-level damage to a valid body (truncation, control characters, invalid UTF-8, trailing
 * junk, JSON that is not an object, non-JSON syntax) and wrong or missing content types. Each request knows
 * the status the contract gives it: 415 for the type, else 413 past the size limit, else 400.
 */
import fc from "fast-check";
import { toJsonText, validBody } from "./hostile_bodies.ts";
import { type BodyMutation, extremeMutations, fieldMutations, imageMutations } from "./hostile_mutations.ts";
import { CHAT_PATHS, type FaceLetter } from "./hostile_faces.ts";

export interface HostileRequest {
  category: string;
  label: string;
  path: string;
  face: FaceLetter;
  /** null sends no Content-Type at all. */
  contentType: string | null;
  bytes: Uint8Array<ArrayBuffer>;
  expect: 400 | 413 | 415;
}

type Damage = {
  category: string;
  label: string;
  bytes: Uint8Array<ArrayBuffer>;
  contentType?: string | null;
};

const encode = (text: string) => new TextEncoder().encode(text);
const VALID_TEXT = toJsonText(validBody());

function splice(text: string, at: number, insert: Uint8Array): Uint8Array<ArrayBuffer> {
  const bytes = encode(text);
  const i = at % (bytes.length + 1);
  return new Uint8Array([...bytes.subarray(0, i), ...insert, ...bytes.subarray(i)]);
}

const fromBody = (m: BodyMutation): Damage => ({ ...m, bytes: encode(toJsonText(m.body)) });

/** C0 controls other than the JSON whitespace ones: invalid anywhere in JSON text, in a string or not. */
const CONTROL = [...Array(32).keys()].filter((c) => c !== 9 && c !== 10 && c !== 13);

/** Byte sequences that are never valid UTF-8: lone continuations, overlongs, surrogates, cut sequences. */
const INVALID_UTF8 = [[0x80], [0xbf], [0xc0, 0xaf], [0xc1, 0x81], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0xf5], [
  0xff,
]];

/** Rewrites of the valid text that no JSON parser accepts. */
const NOT_JSON: readonly [string, (text: string) => string][] = [
  ["single quotes", (t) => t.replaceAll('"', "'")],
  ["trailing comma", (t) => t.slice(0, -1) + ",}"],
  ["NaN literal", (t) => t.replace('"temperature":0.5', '"temperature":NaN')],
  ["leading zero", (t) => t.replace('"top_k":40', '"top_k":040')],
  ["hex number", (t) => t.replace('"seed":7', '"seed":0x7')],
  ["comment", (t) => `/* hi */${t}`],
  ["unquoted key", (t) => t.replace('"stream":', "stream:")],
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
  fc.tuple(fc.uint8Array({ maxLength: 300 }), fc.nat()).map(([random, at]) => {
    const i = at % (random.length + 1);
    return {
      category: "random-bytes",
      label: `${random.length + 1} random bytes with 0xff at ${i}`,
      bytes: new Uint8Array([...random.subarray(0, i), 0xff, ...random.subarray(i)]),
    };
  }),
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
  fc.jsonValue({ maxDepth: 3 }).filter((v) => typeof v !== "object" || v === null || Array.isArray(v)).map(
    (v) => ({
      category: "not-object",
      label: `body ${JSON.stringify(v).slice(0, 60)}`,
      bytes: encode(JSON.stringify(v)),
    }),
  ),
);

/** Content types the JSON endpoints must refuse, including none at all; the body itself is valid. */
const wrongType: fc.Arbitrary<Damage> = fc.oneof(
  fc.constantFrom(
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
    "json",
    "*/*",
  ),
  fc.tuple(
    fc.constantFrom("text", "application", "image", "multipart"),
    fc.stringMatching(/^[a-z][a-z.-]{0,15}$/),
  )
    .filter(([, sub]) => !sub.includes("json"))
    .map(([type, sub]) => `${type}/${sub}`),
).map((contentType) => ({
  category: "content-type",
  label: `Content-Type ${JSON.stringify(contentType)}`,
  bytes: encode(VALID_TEXT),
  contentType,
}));

/** A valid body padded past the limit: refused for its size alone. */
function overLimit(maxBodyBytes: number): fc.Arbitrary<Damage> {
  return fc.integer({ min: 1, max: maxBodyBytes }).map((extra) => {
    const pad = "x".repeat(maxBodyBytes + extra);
    const text = toJsonText({ ...validBody(), messages: [{ role: "user", content: pad }] });
    return { category: "over-limit", label: `a valid body of ${text.length} bytes`, bytes: encode(text) };
  });
}

export function hostileRequests(maxBodyBytes: number): fc.Arbitrary<HostileRequest> {
  const damage = fc.oneof(
    { weight: 4, arbitrary: fieldMutations.map(fromBody) },
    { weight: 1, arbitrary: imageMutations.map(fromBody) },
    { weight: 1, arbitrary: extremeMutations.map(fromBody) },
    { weight: 3, arbitrary: junk },
    { weight: 1, arbitrary: wrongType },
    { weight: 1, arbitrary: overLimit(maxBodyBytes) },
  );
  return fc.tuple(fc.constantFrom(...CHAT_PATHS), damage).map(([{ path, face }, d]) => {
    const contentType = d.contentType === undefined ? "application/json" : d.contentType;
    const expect = d.contentType !== undefined ? 415 : d.bytes.length > maxBodyBytes ? 413 : 400;
    return { category: d.category, label: d.label, path, face, contentType, bytes: d.bytes, expect };
  });
}

/** Sends one hostile request; a hang fails the case instead of the run. */
export function send(baseUrl: string, key: string, r: HostileRequest): Promise<Response> {
  const headers: Record<string, string> = { Authorization: `Bearer ${key}` };
  if (r.contentType !== null) headers["Content-Type"] = r.contentType;
  return fetch(`${baseUrl}${r.path}`, {
    method: "POST",
    headers,
    body: r.bytes,
    signal: AbortSignal.timeout(10_000),
  });
}
