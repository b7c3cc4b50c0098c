/**
 * @module Damage to a valid JSON body, before it is given a path: its bytes spoiled (truncation, control
 * characters, invalid UTF-8, random bytes, trailing junk, non-JSON rewrites, JSON that is not an object), sent
 * with a content type that is not JSON, or padded past the size limit.
 */
import fc from "fast-check";
import { toJsonText } from "./hostile_bodies.ts";

/** One way a request is damaged, before it is given a path. */
export interface Damage {
  category: string;
  label: string;
  bytes: Uint8Array<ArrayBuffer>;
  contentType?: string | null;
}

const encode = (text: string) => new TextEncoder().encode(text);

function splice(text: string, at: number, insert: Uint8Array): Uint8Array<ArrayBuffer> {
  const bytes = encode(text);
  const i = at % (bytes.length + 1);
  return new Uint8Array([...bytes.subarray(0, i), ...insert, ...bytes.subarray(i)]);
}

/** C0 controls other than the JSON whitespace ones: invalid anywhere in JSON text, in a string or not. */
const CONTROL = [...Array(32).keys()].filter((c) => c !== 9 && c !== 10 && c !== 13);
/** Byte sequences that are never valid UTF-8: lone continuations, overlongs, surrogates, cut sequences. */
const INVALID_UTF8 = [[0x80], [0xbf], [0xc0, 0xaf], [0xc1, 0x81], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0xf5], [
  0xff,
]];

/**
 * Damage to the bytes of a valid body's text: truncation, control characters, invalid UTF-8, random bytes,
 * trailing junk, the `notJson` rewrites, and JSON that is not an object.
 */
export function byteDamage(
  validText: string,
  notJson: readonly [string, (text: string) => string][],
): fc.Arbitrary<Damage> {
  return fc.oneof(
    fc.nat({ max: validText.length - 1 }).map((n) => ({
      category: "truncated",
      label: `the first ${n} of ${validText.length} characters`,
      bytes: encode(validText.slice(0, n)),
    })),
    fc.tuple(fc.constantFrom(...CONTROL), fc.nat()).map(([c, at]) => ({
      category: "control-char",
      label: `byte 0x${c.toString(16)} inserted at ${at % (validText.length + 1)}`,
      bytes: splice(validText, at, new Uint8Array([c])),
    })),
    fc.tuple(fc.constantFrom(...INVALID_UTF8), fc.nat()).map(([seq, at]) => ({
      category: "invalid-utf8",
      label: `bytes ${seq.map((b) => b.toString(16)).join(" ")} inserted at ${at % (validText.length + 1)}`,
      bytes: splice(validText, at, new Uint8Array(seq)),
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
      bytes: encode(validText + first + rest),
    })),
    fc.constantFrom(...notJson).map(([name, rewrite]) => ({
      category: "not-json",
      label: name,
      bytes: encode(rewrite(validText)),
    })),
    fc.jsonValue({ maxDepth: 3 }).filter((v) => typeof v !== "object" || v === null || Array.isArray(v)).map(
      (v) => ({
        category: "not-object",
        label: `body ${JSON.stringify(v).slice(0, 60)}`,
        bytes: encode(JSON.stringify(v)),
      }),
    ),
  );
}

/** The valid body sent with `types` or other content types that are not JSON; null sends none. */
export function wrongContentTypes(
  validText: string,
  types: readonly (string | null)[],
): fc.Arbitrary<Damage> {
  return fc.oneof(
    fc.constantFrom(...types),
    fc.tuple(
      fc.constantFrom("text", "application", "image", "multipart"),
      fc.stringMatching(/^[a-z][a-z.-]{0,15}$/),
    )
      .filter(([, sub]) => !sub.includes("json"))
      .map(([type, sub]) => `${type}/${sub}`),
  ).map((contentType) => ({
    category: "content-type",
    label: `Content-Type ${JSON.stringify(contentType)}`,
    bytes: encode(validText),
    contentType,
  }));
}

/** A valid body padded past the limit by `padded`: refused for its size alone. */
export function overLimitBodies(
  maxBodyBytes: number,
  padded: (text: string) => Record<string, unknown>,
): fc.Arbitrary<Damage> {
  return fc.integer({ min: 1, max: maxBodyBytes }).map((extra) => {
    const text = toJsonText(padded("x".repeat(maxBodyBytes + extra)));
    return { category: "over-limit", label: `a valid body of ${text.length} bytes`, bytes: encode(text) };
  });
}
