/**
 * The KV Connect test server (tests/support/kv_connect/) as Deno's own remote client sees it, over real HTTP:
 * `Deno.openKv(url)` with `DENO_KV_ACCESS_TOKEN`, reading and writing the local store behind the server. What
 * the client reads must be what the store holds, byte for byte and versionstamp for versionstamp.
 */
import assert from "node:assert/strict";
import { type KvConnectServer, openKvConnect, startKvConnect } from "./support/kv_connect/mod.ts";
import { storedRows } from "./support/kv_connect/stored_rows.ts";
import { encodeKey } from "./support/kv_connect/key_codec.ts";
import { encode, messages } from "./support/kv_connect/schema.ts";
import { eventually, within } from "./support/wait_for.ts";

const TOKEN = "kv-connect-test-token";

interface Setup {
  server: KvConnectServer;
  /** Deno's remote client, connected to the server. */
  kv: Deno.Kv;
  /** The local store file behind the server. */
  path: string;
}

async function withServer(fn: (setup: Setup) => Promise<void>, latencyMs = 0) {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/store.kv`;
  const server = await startKvConnect({ path, token: TOKEN, latencyMs });
  const kv = await openKvConnect(server.url, TOKEN);
  try {
    await fn({ server, kv, path });
  } finally {
    kv.close();
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
}

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

Deno.test("watch: the first message carries the key's entry, later ones each change", async () => {
  await withServer(async ({ server, kv }) => {
    await kv.set(["w"], "one");
    const reader = kv.watch([["w"]]).getReader();
    const next = async () => (await within("a watch message", reader.read())).value!.map((e) => e.value);
    try {
      assert.deepEqual(await next(), ["one"]);
      await server.store.set(["w"], "two");
      assert.deepEqual(await next(), ["two"]);
      await kv.delete(["w"]);
      assert.deepEqual(await next(), [null]);
      await kv.set(["w"], "three");
      assert.deepEqual(await next(), ["three"]);
    } finally {
      await reader.cancel();
    }
  });
});

Deno.test("watch of several keys: the server marks unchanged keys so, which Deno 2.9.6's client reads as absent", async () => {
  await withServer(async ({ server, kv }) => {
    await kv.set(["w", 1], "one");
    // On the wire: after the first message, only the key that changed is marked changed (as denokv does).
    const metadata = await (await fetch(server.url, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify({ supportedVersions: [3] }),
    })).json();
    const keys = [["w", 1], ["w", 2]].map((key) => ({ key: encodeKey(key) }));
    const response = await fetch(`${server.url}/v2/watch`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${metadata.token}`,
        "x-denokv-version": "3",
        "x-denokv-database-id": metadata.databaseId,
      },
      body: encode(messages.Watch, { keys }),
    });
    const frames = response.body!.getReader();
    const frame = async () => {
      const { value } = await within("a watch frame", frames.read());
      const output = messages.WatchOutput.toObject(messages.WatchOutput.decode(value!.subarray(4)), {
        defaults: true,
      });
      return output.keys.map((
        k: { changed: boolean; entryIfChanged?: unknown },
      ) => [k.changed, !!k.entryIfChanged]);
    };
    // The client's own view, of the same two keys.
    const reader = kv.watch([["w", 1], ["w", 2]]).getReader();
    const next = async () => (await within("a watch message", reader.read())).value!.map((e) => e.value);
    try {
      assert.deepEqual(await frame(), [[true, true], [true, false]]);
      assert.deepEqual(await next(), ["one", null]);
      await server.store.set(["w", 2], "two");
      assert.deepEqual(await frame(), [[false, false], [true, true]]);
      // Deno 2.9.6 turns an unchanged key into null on its way to JavaScript, so the client reports ["w", 1]
      // as absent, though it holds "one". A real denokv sends the same messages: watch one key at a time.
      assert.deepEqual(await next(), [null, "two"]);
      assert.equal((await kv.get(["w", 1])).value, "one");
    } finally {
      await frames.cancel();
      await reader.cancel();
    }
  });
});

Deno.test("the access token is checked at the metadata exchange, and the exchanged token on the data path", async () => {
  await withServer(async ({ server }) => {
    await assert.rejects(openKvConnect(server.url, "not-the-token"), /401/);
    const exchange = (token: string, supportedVersions: number[]) =>
      fetch(server.url, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ supportedVersions }),
      });
    const metadata = await (await exchange(TOKEN, [1, 2, 3])).json();
    assert.equal(metadata.version, 3, "Deno's client offers 1, 2 and 3; the server answers 3");
    assert.deepEqual(metadata.endpoints, [{ url: "/v2", consistency: "strong" }]);
    assert.notEqual(metadata.token, TOKEN, "the data path has a token of its own");
    assert.equal((await (await exchange(TOKEN, [1, 2])).json()).version, 2);
    const refused = await exchange(TOKEN, [1]);
    assert.equal(refused.status, 400, "version 1 is not served, as by denokv");
    await refused.body?.cancel();

    const read = (token: string, headers: Record<string, string> = {}) =>
      fetch(`${server.url}/v2/snapshot_read`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${token}`,
          "content-type": "application/x-protobuf",
          "x-denokv-version": "3",
          "x-denokv-database-id": metadata.databaseId,
          ...headers,
        },
        body: new Uint8Array(),
      });
    const answers = [
      await read(metadata.token),
      await read(TOKEN),
      await read(metadata.token, { "x-denokv-database-id": crypto.randomUUID() }),
      await read(metadata.token, { "x-denokv-version": "1" }),
    ];
    for (const answer of answers) await answer.body?.cancel();
    assert.deepEqual(answers.map((a) => a.status), [200, 401, 400, 400]);
  });
});

Deno.test("latency: each round trip takes at least the injected latency, which can change while in use", async () => {
  await withServer(async ({ server, kv }) => {
    const timed = async (op: () => Promise<unknown>) => {
      const start = performance.now();
      await op();
      return performance.now() - start;
    };
    server.setLatency(150);
    // Each half-trip's timer is asked for a little early, to land on time: up to a millisecond early each.
    assert.ok(await timed(() => kv.get(["x"])) >= 148, "a read");
    assert.ok(await timed(() => kv.set(["x"], 1)) >= 148, "a write");
    server.setLatency(400);
    assert.ok(await timed(() => kv.getMany([["x"], ["y"]])) >= 398, "a read after the change");
  });
});

Deno.test("outage: connections are refused; an operation begun meanwhile is held and done once the store is back", async () => {
  await withServer(async ({ server, kv }) => {
    await kv.set(["before"], 1);
    const reader = kv.watch([["watched"]]).getReader();
    assert.deepEqual((await within("the first watch message", reader.read())).value!.map((e) => e.value), [
      null,
    ]);
    try {
      await server.setOutage(true);
      await assert.rejects(fetch(server.url, { method: "POST" }), TypeError, "a connection is refused");
      const writesBefore = server.requests().atomic_write;
      let settled = false;
      const write = kv.atomic().sum(["count"], 1n).commit().finally(() => settled = true);
      const read = kv.get(["before"]);
      await server.store.set(["watched"], "changed while down");
      // Deno's client retries a refused request without end; by now it has been refused at least once.
      await assert.rejects(fetch(server.url, { method: "POST" }), TypeError);
      assert.equal(settled, false, "the write waits for the store");

      await server.setOutage(false);
      assert.equal((await within("the held write", write)).ok, true);
      assert.equal((await within("the held read", read)).value, 1);
      assert.deepEqual((await server.store.get(["count"])).value, new Deno.KvU64(1n), "applied once");
      assert.equal(
        server.requests().atomic_write,
        writesBefore + 1,
        "no retry reached the store while it was down",
      );
      // The watch reconnects and sends what changed meanwhile.
      const seen = await eventually("the watch to see the change made during the outage", async () => {
        const { value } = await within("a watch message", reader.read());
        return value![0].value === "changed while down";
      });
      assert.equal(seen, true);
    } finally {
      await reader.cancel();
    }
  });
});
