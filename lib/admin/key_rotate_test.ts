/** @module `admin key rotate`: a new secret for the same key, the old one accepted until its grace ends. */
import assert from "node:assert/strict";
import { findKeyByDigest, getKey, secretValid } from "../store/keys.ts";
import { digestSecret } from "../store/key_secret.ts";
import { StoreView } from "../store/view.ts";
import { AdminHarness } from "../../tests/support/admin_harness.ts";

/** Keys are refused for a model no server carries, so each test starts with one that carries it. */
async function withServer(): Promise<AdminHarness> {
  const admin = await AdminHarness.open();
  await admin.json("server", "add", "--name", "gpu1", "--url", "http://gpu1:11434", "--model", "llama3");
  return admin;
}

Deno.test("key rotate issues a new secret for the same key; the old one works until the grace ends", async () => {
  using admin = await withServer();
  const created = await admin.json("key", "create", "--model", "llama3", "--name", "bot", "--rpm", "7");
  const oldDigest = await digestSecret(created.key);
  const rotated = await admin.json("key", "rotate", created.id, "--grace", "90s");
  assert.deepEqual(Object.keys(rotated), ["id", "key", "previousValidUntil"]);
  assert.equal(rotated.id, created.id);
  assert.notEqual(rotated.key, created.key);
  const until = new Date(admin.now.getTime() + 90_000);
  assert.equal(rotated.previousValidUntil, until.toISOString());

  const newDigest = await digestSecret(rotated.key);
  const stored = await getKey(admin.kv, created.id);
  assert.equal(stored.digest, newDigest);
  assert.equal(stored.rpm, 7);
  assert.equal(stored.name, "bot");
  const viaOld = await findKeyByDigest(admin.kv, oldDigest);
  assert.equal(viaOld?.id, created.id, "the old secret is found by the same one indexed read");
  assert.equal(secretValid(viaOld!, oldDigest, until.getTime() - 1), true);
  assert.equal(secretValid(viaOld!, oldDigest, until.getTime()), false);
  assert.equal(secretValid(viaOld!, newDigest, until.getTime() + 1e9), true);

  const shown = JSON.stringify(await admin.json("key", "show", created.id));
  for (const hidden of [created.key, rotated.key, oldDigest, newDigest]) {
    assert.equal(shown.includes(hidden), false);
  }
  assert.match(shown, /"previousValidUntil"/);
});

Deno.test("the gateway's key cache honours the end of the grace period to the millisecond", async () => {
  using admin = await withServer();
  const created = await admin.json("key", "create", "--model", "llama3");
  const rotated = await admin.json("key", "rotate", created.id, "--grace", "30m");
  let clock = admin.now.getTime();
  const view = await StoreView.open(admin.kv, 60_000, () => clock);
  try {
    const [oldDigest, newDigest] = [await digestSecret(created.key), await digestSecret(rotated.key)];
    assert.equal((await view.findKey(oldDigest))?.id, created.id);
    clock = Date.parse(rotated.previousValidUntil) - 1;
    assert.equal((await view.findKey(oldDigest))?.id, created.id, "cached and still in grace");
    clock += 1;
    assert.equal(await view.findKey(oldDigest), null, "the cached entry ends with the grace");
    assert.equal((await view.findKey(newDigest))?.id, created.id);
  } finally {
    view.close();
  }
});

Deno.test("grace 0 ends the old secret at once; revoke ends both; a second rotation ends the first", async () => {
  using admin = await withServer();
  const created = await admin.json("key", "create", "--model", "llama3");
  const first = await admin.json("key", "rotate", created.id, "--grace", "0");
  assert.equal(first.previousValidUntil, admin.now.toISOString());
  assert.equal(await findKeyByDigest(admin.kv, await digestSecret(created.key)), null);

  const second = await admin.json("key", "rotate", created.id);
  assert.equal(
    second.previousValidUntil,
    new Date(admin.now.getTime() + 86_400_000).toISOString(),
    "24h default",
  );
  const third = await admin.json("key", "rotate", created.id, "--grace", "7d");
  assert.equal(
    await findKeyByDigest(admin.kv, await digestSecret(first.key)),
    null,
    "only one previous secret",
  );
  assert.ok(await findKeyByDigest(admin.kv, await digestSecret(second.key)));

  await admin.json("key", "update", created.id, "--rpm", "3");
  assert.equal(
    (await findKeyByDigest(admin.kv, await digestSecret(second.key)))?.rpm,
    3,
    "policy reaches the old",
  );

  await admin.json("key", "revoke", created.id);
  for (const secret of [second.key, third.key]) {
    assert.equal(await findKeyByDigest(admin.kv, await digestSecret(secret)), null);
  }
  assert.match(await admin.fails(1, "key", "rotate", created.id), /revoked and cannot be rotated/);
});

Deno.test("key rotate refuses bad durations and unknown keys with one line", async () => {
  using admin = await withServer();
  const { id } = await admin.json("key", "create", "--model", "llama3");
  for (const bad of ["24", "1w", "1.5h", "soon", ""]) {
    assert.match(
      await admin.fails(2, "key", "rotate", id, "--grace", bad),
      /--grace must be a duration like 90s/,
    );
  }
  assert.match(await admin.fails(2, "key", "rotate", id, "--grace", "31d"), /at most 30d/);
  assert.match(await admin.fails(1, "key", "rotate", "key_nope"), /No key with id key_nope/);
  const text = await admin.human("key", "rotate", id, "--grace", "30m");
  assert.match(text, /^ +gwk_\S+$/m);
  assert.match(text, /keeps working until 2026-11-22T12:30:00.000Z/);
});
