/**
 * The KV Connect test server (tests/support/kv_connect/) as Deno's own remote client sees it over real HTTP,
 * beyond plain reads and writes: watches, the access token, injected latency and outages.
 */
import assert from "node:assert/strict";
import { openKvConnect } from "./support/kv_connect/mod.ts";
import { encodeKey } from "./support/kv_connect/key_codec.ts";
import { encode, messages } from "./support/kv_connect/schema.ts";
import { eventually, within } from "./support/wait_for.ts";
import { TOKEN, withServer } from "./support/kv_connect_setup.ts";

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
