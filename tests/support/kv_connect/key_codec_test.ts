import assert from "node:assert/strict";
import fc from "fast-check";
import { compareBytes, decodeKey, encodeKey } from "./key_codec.ts";
import { storedRows } from "./stored_rows.ts";

/** Fixed, so a failure names a case that reruns the same way. */
const SEED = 20_261_125;

const keyPart: fc.Arbitrary<Deno.KvKeyPart> = fc.oneof(
  fc.string({ unit: "binary", maxLength: 8 }),
  fc.double(),
  fc.bigInt({ min: -(2n ** 200n), max: 2n ** 200n }),
  fc.uint8Array({ maxLength: 6 }),
  fc.boolean(),
  fc.constantFrom<Deno.KvKeyPart>(0, -0, 0n, -1n, "", new Uint8Array([0, 0xff, 0]), "a\u0000b"),
);
const kvKey = fc.array(keyPart, { minLength: 1, maxLength: 4 });

Deno.test("keys: the bytes are those Deno KV writes, they decode back to the key, and their order is the store's", async () => {
  const dir = await Deno.makeTempDir();
  const kv = await Deno.openKv(`${dir}/keys.kv`);
  try {
    const keys = fc.sample(kvKey, { seed: SEED, numRuns: 400 });
    for (const key of keys) await kv.set(key, true);
    const rows = storedRows(`${dir}/keys.kv`);
    const listed = await Array.fromAsync(kv.list({ prefix: [] }));
    assert.ok(rows.length > 300, `${rows.length} distinct keys`);
    assert.equal(rows.length, listed.length);
    for (const [i, { key }] of listed.entries()) {
      const bytes = encodeKey(key);
      assert.deepEqual(bytes, rows[i].key, `the bytes of ${Deno.inspect(key)}`);
      assert.deepEqual(decodeKey(bytes), key);
      if (i > 0) assert.ok(compareBytes(rows[i - 1].key, bytes) < 0, "byte order is list order");
    }
  } finally {
    kv.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("keys: the published examples encode byte for byte", () => {
  assert.deepEqual([...encodeKey(["hello"])], [0x02, 0x68, 0x65, 0x6c, 0x6c, 0x6f, 0x00]);
  assert.deepEqual(
    [...encodeKey(["hello", new Uint8Array([1, 2, 0, 7, 8])])],
    [0x02, 0x68, 0x65, 0x6c, 0x6c, 0x6f, 0x00, 0x01, 0x01, 0x02, 0x00, 0xff, 0x07, 0x08, 0x00],
  );
  assert.deepEqual([...encodeKey([0n])], [0x14]);
  assert.deepEqual([...encodeKey([false, true])], [0x26, 0x27]);
});

Deno.test("keys: range bounds and malformed bytes are not keys", () => {
  const key = encodeKey(["a", 1n]);
  assert.equal(decodeKey(Uint8Array.of(...key, 0x00)), null, "a key followed by 0x00 is a bound");
  assert.equal(decodeKey(Uint8Array.of(...key, 0xff)), null, "a key followed by 0xff is a bound");
  assert.equal(decodeKey(Uint8Array.of(0x02, 0x61)), null, "an unterminated string");
  assert.equal(decodeKey(Uint8Array.of(0x15, 0x00)), null, "an integer in a form Deno never writes");
  assert.equal(decodeKey(Uint8Array.of(0x05)), null, "a nested tuple, which Deno KV keys do not have");
});
