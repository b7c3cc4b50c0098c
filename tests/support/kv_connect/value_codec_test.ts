import assert from "node:assert/strict";
import fc from "fast-check";
import { encodeKey } from "./key_codec.ts";
import { storedRows } from "./stored_rows.ts";
import { ValueEncoding } from "./schema.ts";
import { decodeValue, encodeValue } from "./value_codec.ts";

const SEED = 20_261_126;

const leaf = fc.oneof(
  fc.string(),
  fc.double(),
  fc.bigInt(),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
  fc.date({ noInvalidDate: true }),
  fc.uint8Array({ maxLength: 8 }),
);
const value = fc.letrec((tie) => ({
  any: fc.oneof({ depthSize: "small" }, leaf, tie("array"), tie("object"), tie("map"), tie("set")),
  array: fc.array(tie("any"), { maxLength: 4 }),
  object: fc.dictionary(fc.string({ maxLength: 6 }), tie("any"), { maxKeys: 4, noNullPrototype: true }),
  map: fc.array(fc.tuple(fc.string({ maxLength: 4 }), tie("any")), { maxLength: 3 }).map((e) => new Map(e)),
  set: fc.array(fc.oneof(fc.string(), fc.double()), { maxLength: 3 }).map((e) => new Set(e)),
})).any;

Deno.test("values: the encoding and bytes are those Deno KV writes, and they decode back to the value", async () => {
  const dir = await Deno.makeTempDir();
  const kv = await Deno.openKv(`${dir}/values.kv`);
  try {
    const values = [
      ...fc.sample(value, { seed: SEED, numRuns: 300 }),
      new Deno.KvU64(0n),
      new Deno.KvU64(2n ** 64n - 1n),
      new Uint8Array([0, 1, 2]),
      { nested: new Uint8Array([7]), when: new Date(0), big: 2n ** 70n, re: /x+/g },
    ];
    for (const [i, v] of values.entries()) await kv.set(["v", i], v);
    const rows = new Map(storedRows(`${dir}/values.kv`).map((r) => [r.key.join(), r]));
    for (const [i, v] of values.entries()) {
      const row = rows.get(encodeKey(["v", i]).join())!;
      const wire = encodeValue(v);
      assert.equal(wire.encoding, row.encoding, `the encoding of ${Deno.inspect(v)}`);
      // node:v8 labels its output with V8 format version 15, Deno KV with its engine's newer one; what
      // follows the two header bytes is the same.
      const body = (bytes: Uint8Array) => wire.encoding === ValueEncoding.V8 ? bytes.subarray(2) : bytes;
      assert.deepEqual(body(wire.data), body(row.value), `the bytes of ${Deno.inspect(v)}`);
      assert.deepEqual(decodeValue({ data: row.value, encoding: row.encoding }), v);
    }
  } finally {
    kv.close();
    await Deno.remove(dir, { recursive: true });
  }
});
