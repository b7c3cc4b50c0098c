import assert from "node:assert/strict";
import { createKey, revokeKey } from "./keys.ts";
import { digestSecret } from "./key_secret.ts";
import { basePolicy, type KeyRecord } from "./records.ts";
import { fillKeys } from "../../tests/support/fill_keys.ts";
import { StoreView } from "./view.ts";

const POLICY = basePolicy("m1");

/** Counts the store reads a lookup makes, by wrapping the real KV. */
function countingKv(kv: Deno.Kv) {
  const counts = { get: 0, getMany: 0, list: 0 };
  const proxy = new Proxy(kv, {
    get(target, prop) {
      if (prop === "get" || prop === "getMany" || prop === "list") {
        return (...args: unknown[]) => {
          counts[prop]++;
          return (target[prop] as (...a: unknown[]) => unknown).apply(target, args);
        };
      }
      const value = Reflect.get(target, prop);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { kv: proxy, counts };
}

Deno.test("a key lookup is one indexed read among 100,000 keys, then cached until the store changes", async () => {
  using kv = await Deno.openKv(":memory:");
  await fillKeys(kv, 100_000);
  const { secret, record } = await createKey(kv, POLICY);
  const { kv: counted, counts } = countingKv(kv);
  const view = await StoreView.open(counted, 60_000);
  try {
    const before = { ...counts };
    const digest = await digestSecret(secret);
    assert.equal((await view.findKey(digest))?.id, record.id);
    assert.deepEqual(
      {
        get: counts.get - before.get,
        getMany: counts.getMany - before.getMany,
        list: counts.list - before.list,
      },
      { get: 1, getMany: 0, list: 0 },
    );
    assert.equal((await view.findKey(digest))?.id, record.id);
    assert.equal(counts.get - before.get, 1, "second lookup served from memory");

    await revokeKey(kv, record.id);
    assert.equal(await view.refresh(), true, "the revocation moved the generation");
    assert.equal(await view.findKey(digest), null);
  } finally {
    view.close();
  }
});

Deno.test("the snapshot reloads only when the generation moves", async () => {
  using kv = await Deno.openKv(":memory:");
  const view = await StoreView.open(kv, 60_000);
  try {
    assert.equal(await view.refresh(), false);
    await createKey(kv, POLICY);
    assert.equal(await view.refresh(), true);
    assert.equal(await view.refresh(), false);
  } finally {
    view.close();
  }
});

Deno.test("lookups of one digest that arrive together share one read", async () => {
  using kv = await Deno.openKv(":memory:");
  const { secret, record } = await createKey(kv, POLICY);
  const { kv: counted, counts } = countingKv(kv);
  const view = await StoreView.open(counted, 60_000);
  try {
    const digest = await digestSecret(secret);
    const before = counts.get;
    const found = await Promise.all(Array.from({ length: 20 }, () => view.findKey(digest)));
    assert.deepEqual(found.map((k) => k?.id), Array(20).fill(record.id));
    assert.equal(counts.get - before, 1);
    assert.equal((await view.findKey(await digestSecret("not-a-key")))?.id, undefined);
    assert.equal(counts.get - before, 2, "another digest is another read");
  } finally {
    view.close();
  }
});

Deno.test("a reload reads the known keys again before it takes effect: requests after it need no read, and a revoked key is refused", async () => {
  using kv = await Deno.openKv(":memory:");
  const kept = await createKey(kv, POLICY);
  const revoked = await createKey(kv, POLICY);
  const { kv: counted, counts } = countingKv(kv);
  const view = await StoreView.open(counted, 60_000);
  try {
    const [keptDigest, revokedDigest, unknown] = await Promise.all(
      [kept.secret, revoked.secret, "not-a-key"].map(digestSecret),
    );
    for (const digest of [keptDigest, revokedDigest, unknown]) await view.findKey(digest);
    await revokeKey(kv, revoked.record.id);
    assert.equal(await view.refresh(), true);
    const before = { ...counts };
    assert.equal((view.findKey(keptDigest) as KeyRecord | null)?.id, kept.record.id, "found without a wait");
    assert.equal(view.findKey(revokedDigest), null);
    assert.equal(view.findKey(unknown), null);
    assert.deepEqual(counts, before, "no read");
  } finally {
    view.close();
  }
});
