/**
 * Whole hostile requests for the property test: a public path, a Content-Type and body bytes, from the body
 * mutations plus byte-level damage to a valid body (truncation, control characters, invalid UTF-8, trailing
 * junk, JSON that is not an object, non-JSON syntax) and wrong or missing content types. Each request knows
 * the status the contract gives it: 415 for the type, else 413 past the size limit, else 400. The chat paths
 * keep their own field mutations (hostile_mutations.ts); the byte and content-type damage, the over-limit
 * bodies and the sending are hostile_contract.ts's, given this body's own rewrites and types.
 */
import fc from "fast-check";
import { toJsonText, validBody } from "./hostile_bodies.ts";
import { type BodyMutation, extremeMutations, fieldMutations, imageMutations } from "./hostile_mutations.ts";
import { CHAT_PATHS, type FaceLetter } from "./hostile_faces.ts";
import {
  byteDamage,
  type Damage,
  overLimitBodies,
  sendContractRequest,
  sentAs,
  wrongContentTypes,
} from "./hostile_contract.ts";

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

const encode = (text: string) => new TextEncoder().encode(text);
const VALID_TEXT = toJsonText(validBody());

const fromBody = (m: BodyMutation): Damage => ({ ...m, bytes: encode(toJsonText(m.body)) });

/** A valid body whose one message is `text`. */
const padded = (text: string) => ({ ...validBody(), messages: [{ role: "user", content: text }] });

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

/** Content types the JSON endpoints must refuse, including none at all; the body itself is valid. */
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
  "json",
  "*/*",
];

export function hostileRequests(maxBodyBytes: number): fc.Arbitrary<HostileRequest> {
  const damage = fc.oneof(
    { weight: 4, arbitrary: fieldMutations.map(fromBody) },
    { weight: 1, arbitrary: imageMutations.map(fromBody) },
    { weight: 1, arbitrary: extremeMutations.map(fromBody) },
    { weight: 3, arbitrary: byteDamage(VALID_TEXT, NOT_JSON) },
    { weight: 1, arbitrary: wrongContentTypes(VALID_TEXT, WRONG_TYPES) },
    { weight: 1, arbitrary: overLimitBodies(maxBodyBytes, padded) },
  );
  return fc.tuple(fc.constantFrom(...CHAT_PATHS), damage).map(([{ path, face }, d]) => ({
    category: d.category,
    label: d.label,
    path,
    face,
    bytes: d.bytes,
    ...sentAs(d, maxBodyBytes),
  }));
}

/** Sends one hostile request with the key as a bearer token; a hang fails the case instead of the run. */
export function send(baseUrl: string, key: string, r: HostileRequest): Promise<Response> {
  return sendContractRequest(baseUrl, { Authorization: `Bearer ${key}` }, r);
}
