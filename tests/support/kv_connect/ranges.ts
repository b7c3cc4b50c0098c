/**
 * @module A read range of the protocol, bytes [start, end), as a read of the local store, whose list only takes
 * keys (a prefix, a start key, an end key). The client sends bounds that are keys, or keys followed by 0x00
 * (just past that key) or 0xff (past the key and everything under it). A range is planned as one key, or as a
 * list selector that covers at least the range (exactly, for the bounds Deno's client sends); the caller keeps
 * only keys whose bytes fall in [start, end), so any bounds read correctly, only less directly.
 */
import { compareBytes, decodeKey, encodeKey, startsWith } from "./key_codec.ts";

export type RangePlan = { point: Deno.KvKey } | { selector: Deno.KvListSelector } | { empty: true };

/** The key a bound names, and where the bound sits relative to it. */
type Bound = { kind: "at" | "after" | "past"; key: Deno.KvKey } | null;

function bound(bytes: Uint8Array): Bound {
  const key = decodeKey(bytes);
  if (key) return { kind: "at", key };
  if (bytes.length === 0) return null;
  const last = bytes[bytes.length - 1];
  const before = last === 0x00 || last === 0xff ? decodeKey(bytes.subarray(0, -1)) : null;
  if (!before) return null;
  return { kind: last === 0x00 ? "after" : "past", key: before };
}

export function planRange(start: Uint8Array, end: Uint8Array): RangePlan {
  if (compareBytes(start, end) >= 0) return { empty: true };
  const low = bound(start);
  const high = bound(end);
  if (low?.kind === "at" && high?.kind === "after" && low.key.length && sameBytes(low.key, high.key)) {
    return { point: low.key };
  }
  // Every key at or after `from` in the store's order is listed; the bytes decide the rest.
  const from = low?.key.length ? low.key : undefined;
  if (high?.kind === "at" && high.key.length) {
    return { selector: from ? { start: from, end: high.key } : { prefix: [], end: high.key } };
  }
  if (high?.kind === "past" && compareBytes(start, encodeKey(high.key)) > 0) {
    // `start` lies under the prefix (past the prefix's own key), so the prefix's list covers the range.
    const prefix = high.key;
    const inside = from && from.length > prefix.length && startsWith(encodeKey(from), encodeKey(prefix));
    return { selector: inside ? { prefix, start: from } : { prefix } };
  }
  return { selector: from ? { prefix: [], start: from } : { prefix: [] } };
}

function sameBytes(a: Deno.KvKey, b: Deno.KvKey): boolean {
  return compareBytes(encodeKey(a), encodeKey(b)) === 0;
}
