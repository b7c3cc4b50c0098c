/**
 * @module Deno KV keys as bytes on the wire: the FoundationDB tuple encoding (through fdb-tuple), with Deno
 * KV's typing of the parts: a number is always a double, a bigint always an integer, Uint8Array a byte string.
 * Byte order is the store's key order, which the range reads depend on.
 */
import { Buffer } from "node:buffer";
import { pack, type TupleItem, unpack } from "fdb-tuple";

function toItem(part: Deno.KvKeyPart): TupleItem {
  switch (typeof part) {
    // fdb-tuple would write an integral number as an integer; Deno KV writes every number as a double.
    case "number":
      return { type: "double", value: part };
    case "string":
    case "bigint":
    case "boolean":
      return part;
    case "object":
      if (part instanceof Uint8Array) return Buffer.from(part.buffer, part.byteOffset, part.byteLength);
  }
  throw new TypeError(`not a Deno KV key part: ${String(part)}`);
}

function fromItem(item: TupleItem): Deno.KvKeyPart {
  if (typeof item === "string" || typeof item === "boolean" || typeof item === "bigint") return item;
  // Integers come back as numbers when they fit one; in Deno KV they are bigints.
  if (typeof item === "number") return BigInt(item);
  if (Buffer.isBuffer(item)) return new Uint8Array(item);
  if (item && typeof item === "object" && "type" in item && item.type === "double") return item.value;
  throw new TypeError("a tuple part that Deno KV keys do not have");
}

export function encodeKey(key: Deno.KvKey): Uint8Array {
  const packed = pack(key.map(toItem));
  return new Uint8Array(packed.buffer, packed.byteOffset, packed.byteLength);
}

/**
 * The key these bytes encode, or null when they are not a key in the canonical form the store writes (a range
 * bound such as a prefix followed by 0x00 or 0xff, or anything else).
 */
export function decodeKey(bytes: Uint8Array): Deno.KvKey | null {
  let key: Deno.KvKey;
  try {
    // `true`: doubles come back marked as doubles, so they are not mistaken for integers.
    key = unpack(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), true).map(fromItem);
  } catch {
    return null;
  }
  return compareBytes(encodeKey(key), bytes) === 0 ? key : null;
}

export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}

export function startsWith(bytes: Uint8Array, prefix: Uint8Array): boolean {
  return bytes.length >= prefix.length && compareBytes(bytes.subarray(0, prefix.length), prefix) === 0;
}
