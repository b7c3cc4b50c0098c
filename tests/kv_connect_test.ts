/**
 * The KV Connect test server (tests/support/kv_connect/) as Deno's own remote client sees it, over real HTTP:
 * `Deno.openKv(url)` with `DENO_KV_ACCESS_TOKEN`, reading and writing the local store behind the server. What
 * the client reads must be what the store holds, byte for byte and versionstamp for versionstamp.
 */
import assert from "node:assert/strict";
import { storedRows } from "./support/kv_connect/stored_rows.ts";
import { encodeKey } from "./support/kv_connect/key_codec.ts";
import { withServer } from "./support/kv_connect_setup.ts";

const VALUES: unknown[] = [
  "text",
  42.5,
  -0,
  2n ** 80n,
  true,
  null,
  new Date(1_700_000_000_000),
  new Uint8Array([0, 1, 255]),
  new Deno.KvU64(7n),
  {
    nested: { list: [1, "two", new Uint8Array([3])], when: new Date(0) },
    map: new Map([["k", new Set([1])]]),
  },
];

Deno.test("get, set, getMany and delete through the server read and write the store behind it", async () => {
  await withServer(async ({ server, kv }) => {
    for (const [i, value] of VALUES.entries()) {
      const { versionstamp } = await kv.set(["remote", i], value);
      const stored = await server.store.get(["remote", i]);
      assert.deepEqual(stored.value, value, `${Deno.inspect(value)} as the store holds it`);
      assert.equal(stored.versionstamp, versionstamp, "the commit's versionstamp is the store's");
    }
    for (const [i, value] of VALUES.entries()) {
      const { versionstamp } = await server.store.set(["local", i], value);
      assert.deepEqual(await kv.get(["local", i]), { key: ["local", i], value, versionstamp });
    }
    const many = await kv.getMany([["remote", 0], ["missing"], ["local", 9]]);
    assert.deepEqual(many.map((e) => e.value), ["text", null, VALUES[9]]);
    assert.equal(many[1].versionstamp, null);
    await kv.delete(["remote", 0]);
    assert.equal((await server.store.get(["remote", 0])).versionstamp, null);
    assert.equal((await kv.get(["remote", 0])).value, null);
  });
});

/** Keys of every part type, in groups a prefix can pick out. */
function sampleKeys(): Deno.KvKey[] {
  const parts: Deno.KvKeyPart[] = [
    "",
    "a",
    "a\u0000b",
    "b",
    -1.5,
    0,
    3,
    -(2n ** 70n),
    -1n,
    0n,
    5n,
    2n ** 70n,
    new Uint8Array([]),
    new Uint8Array([0]),
    new Uint8Array([0, 0xff]),
    false,
    true,
  ];
  const keys: Deno.KvKey[] = [["t"]];
  for (const p of parts) {
    keys.push(["t", p]);
    keys.push(["t", p, "child"]);
    keys.push(["t", "sub", p]);
  }
  return [...keys, ["s", 1n], ["u", 1n], ["t2"]];
}

Deno.test("list through the server gives what the store lists: prefixes, starts, ends, limits, reverse, cursors", async () => {
  await withServer(async ({ server, kv }) => {
    for (const [i, key] of sampleKeys().entries()) await server.store.set(key, { i });
    const selectors: Deno.KvListSelector[] = [
      { prefix: [] },
      { prefix: ["t"] },
      { prefix: ["t", "sub"] },
      { prefix: ["t", "a"] },
      { prefix: ["nothing"] },
      { prefix: ["t"], start: ["t", 0n] },
      { prefix: ["t"], end: ["t", 0n] },
      { prefix: ["t", "sub"], start: ["t", "sub", 3] },
      { prefix: ["t"], end: ["t", true] },
      { start: ["s"], end: ["u", 2n] },
      { start: ["t", new Uint8Array([0])], end: ["t", -1.5] },
      { start: ["t", "b"], end: ["t", "b", "child"] },
    ];
    let compared = 0;
    for (const selector of selectors) {
      for (
        const options of [{}, { reverse: true }, { limit: 3 }, { limit: 4, reverse: true }, { batchSize: 2 }]
      ) {
        const what = `${Deno.inspect(selector)} ${Deno.inspect(options)}`;
        const local = await Array.fromAsync(server.store.list(selector, options));
        const remote = await Array.fromAsync(kv.list(selector, options));
        assert.deepEqual(remote, local, what);
        compared += local.length;
      }
      // A page's cursor is the store's, and resumes the list where the page ended.
      const localPage = server.store.list(selector, { limit: 5 });
      const remotePage = kv.list(selector, { limit: 5 });
      await Array.fromAsync(localPage);
      await Array.fromAsync(remotePage);
      assert.equal(remotePage.cursor, localPage.cursor);
      const options = { cursor: remotePage.cursor, batchSize: 3 };
      assert.deepEqual(
        await Array.fromAsync(kv.list(selector, options)),
        await Array.fromAsync(server.store.list(selector, options)),
        `${Deno.inspect(selector)} after its first page`,
      );
      for (const reverse of [false, true]) {
        const page = kv.list(selector, { limit: 2, reverse });
        await Array.fromAsync(page);
        const resumed = { cursor: page.cursor, reverse, batchSize: 2 };
        assert.deepEqual(
          await Array.fromAsync(kv.list(selector, resumed)),
          await Array.fromAsync(server.store.list(selector, resumed)),
          `${Deno.inspect(selector)} after a page of 2 (reverse: ${reverse})`,
        );
      }
    }
    assert.ok(compared > 500, `${compared} entries compared`);
  });
});

Deno.test("atomic checks compare against the versionstamps reads return; a failed check writes nothing", async () => {
  await withServer(async ({ server, kv }) => {
    await kv.set(["c"], 1);
    const first = await kv.get(["c"]);
    const committed = await kv.atomic().check(first).set(["c"], 2).commit();
    assert.equal(committed.ok, true);
    assert.equal((await server.store.get(["c"])).versionstamp, committed.ok && committed.versionstamp);

    // `first` is stale now: the check fails, and the other mutation in the same operation is not applied.
    const stale = await kv.atomic().check(first).set(["c"], 3).set(["other"], "x").commit();
    assert.deepEqual(stale, { ok: false });
    assert.equal((await server.store.get(["c"])).value, 2);
    assert.equal((await server.store.get(["other"])).versionstamp, null);

    // A null versionstamp checks that the key is absent.
    assert.deepEqual(await kv.atomic().check({ key: ["c"], versionstamp: null }).set(["c"], 4).commit(), {
      ok: false,
    });
    assert.equal(
      (await kv.atomic().check({ key: ["new"], versionstamp: null }).set(["new"], 1).commit()).ok,
      true,
    );
    // Two checks, one stale: nothing.
    const current = await kv.get(["c"]);
    const mixed = await kv.atomic().check(current).check(first).delete(["c"]).commit();
    assert.equal(mixed.ok, false);
    assert.equal((await kv.get(["c"])).value, 2);
  });
});

Deno.test("sum, min and max work on KvU64 values; a sum on a value that is not one is refused", async () => {
  await withServer(async ({ server, kv }) => {
    await kv.atomic().sum(["n"], 5n).commit();
    await kv.atomic().sum(["n"], 2n).sum(["n"], 3n).commit();
    assert.deepEqual((await server.store.get(["n"])).value, new Deno.KvU64(10n));
    await kv.atomic().sum(["n"], 2n ** 64n - 1n).commit();
    assert.deepEqual(
      (await kv.get(["n"])).value,
      new Deno.KvU64(9n),
      "sums wrap around at 2^64, as the store's do",
    );
    await kv.atomic().min(["n"], 4n).max(["m"], 8n).commit();
    await kv.atomic().max(["m"], 6n).min(["absent"], 3n).commit();
    assert.deepEqual((await server.store.getMany([["n"], ["m"], ["absent"]])).map((e) => e.value), [
      new Deno.KvU64(4n),
      new Deno.KvU64(8n),
      new Deno.KvU64(3n),
    ]);
    await kv.set(["text"], "not a number");
    await assert.rejects(kv.atomic().sum(["text"], 1n).commit(), /status=400/);
    assert.equal((await kv.get(["text"])).value, "not a number");
  });
});

Deno.test("expireIn reaches the store as the same expiry", async () => {
  await withServer(async ({ kv, path }) => {
    const before = Date.now();
    await kv.set(["expiring"], 1, { expireIn: 60_000 });
    const after = Date.now();
    await kv.set(["kept"], 1);
    const rows = new Map(storedRows(path).map((r) => [r.key.join(), r.expirationMs]));
    const expiry = rows.get(encodeKey(["expiring"]).join())!;
    // The client sends a moment, the server hands the store a duration: a millisecond of rounding either way.
    assert.ok(
      expiry >= before + 60_000 - 1 && expiry <= after + 60_000 + 1,
      `${expiry} in [${before}, ${after}] + 60 s`,
    );
    assert.equal(rows.get(encodeKey(["kept"]).join()), -1);
  });
});
