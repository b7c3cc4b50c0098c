/**
 * @module Deno KV values as bytes on the wire, chosen as Deno KV chooses: a Deno.KvU64 as 8 little-endian
 * bytes (LE64), a Uint8Array as itself (BYTES), anything else in V8's serialization format (V8), read and
 * written with node:v8's plain Serializer so typed arrays stay V8's own encoding, not Node's host objects. The
 * bytes written are Deno's but for the format version in the header (node:v8 writes 15), which V8 reads too.
 */
import { Buffer } from "node:buffer";
import { Deserializer, Serializer } from "node:v8";
import { BadRequest, ValueEncoding } from "./schema.ts";

export interface WireValue {
  data: Uint8Array;
  encoding: number;
}

export function decodeValue({ data, encoding }: WireValue): unknown {
  switch (encoding) {
    case ValueEncoding.LE64:
      if (data.length !== 8) throw new BadRequest("A LE64 value must be 8 bytes.");
      return new Deno.KvU64(new DataView(data.buffer, data.byteOffset, 8).getBigUint64(0, true));
    case ValueEncoding.BYTES:
      return new Uint8Array(data);
    case ValueEncoding.V8:
      try {
        const reader = new Deserializer(data);
        reader.readHeader();
        return reader.readValue();
      } catch (error) {
        throw new BadRequest(`The V8 value could not be read: ${(error as Error).message}`);
      }
  }
  throw new BadRequest(`The value encoding ${encoding} is unknown.`);
}

export function encodeValue(value: unknown): WireValue {
  if (value instanceof Deno.KvU64) {
    const data = new Uint8Array(8);
    new DataView(data.buffer).setBigUint64(0, value.value, true);
    return { data, encoding: ValueEncoding.LE64 };
  }
  if (value instanceof Uint8Array) return { data: value, encoding: ValueEncoding.BYTES };
  const writer = new Serializer();
  writer.writeHeader();
  writer.writeValue(value);
  return { data: new Uint8Array(writer.releaseBuffer()), encoding: ValueEncoding.V8 };
}

/** The 10-byte versionstamp on the wire and the 20-hex-digit string the local store gives. */
export function versionstampBytes(hex: string): Uint8Array {
  return new Uint8Array(Buffer.from(hex, "hex"));
}

export function versionstampHex(bytes: Uint8Array): string {
  if (bytes.length !== 10) throw new BadRequest("Invalid versionstamp.");
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex");
}
