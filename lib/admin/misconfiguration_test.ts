/**
 * @module Mistakes the CLI refuses instead of storing: a key for a model no server carries (unless `--force`), an
 * expiry already past, and a flag given twice. Each is one line on stderr and leaves the store and the audit
 * trail as they were.
 */
import assert from "node:assert/strict";
import { listKeys } from "../store/keys.ts";
import { AdminHarness } from "../../tests/support/admin_harness.ts";

/** gpu1 carries llama3 (also called "assistant"), gpu2 qwen2; cluster c2 holds gpu2 alone. */
async function setUp(): Promise<AdminHarness> {
  const admin = await AdminHarness.open();
  await admin.json(
    "server",
    "add",
    "--name",
    "gpu1",
    "--url",
    "http://gpu1:11434",
    "--model",
    "llama3=assistant",
  );
  await admin.json("server", "add", "--name", "gpu2", "--url", "http://gpu2:11434", "--model", "qwen2");
  await admin.json("cluster", "add", "--name", "c2", "--server", "gpu2");
  return admin;
}

async function auditCount(admin: AdminHarness): Promise<number> {
  return (await admin.json("audit")).length;
}

Deno.test("key create refuses a model no server carries, unless --force", async () => {
  using admin = await setUp();
  const audited = await auditCount(admin);
  assert.equal(
    await admin.fails(1, "key", "create", "--model", "nosuch"),
    'admin: key create: No server carries model "nosuch" (carried: assistant, llama3, qwen2); add it to a ' +
      "server first, or give --force",
  );
  assert.equal(
    await admin.fails(1, "key", "create", "--model", "llama3", "--cluster", "c2"),
    'admin: key create: No server of cluster "c2" carries model "llama3" (carried: qwen2); add it to a ' +
      "server first, or give --force",
  );
  assert.deepEqual(await listKeys(admin.kv), []);
  assert.equal(await auditCount(admin), audited, "a refused key leaves no audit entry");

  // A tag or an alias is a model name, as routing matches it; disabled servers still count.
  assert.equal((await admin.json("key", "create", "--model", "assistant")).model, "assistant");
  await admin.json("server", "disable", "gpu2");
  assert.equal((await admin.json("key", "create", "--model", "qwen2", "--cluster", "c2")).model, "qwen2");
  const forced = await admin.json("key", "create", "--model", "nosuch", "--force");
  assert.equal(forced.model, "nosuch");
  assert.equal("force" in forced, false, "--force is not a setting of the key");

  await admin.json("cluster", "add", "--name", "empty");
  assert.match(
    await admin.fails(1, "key", "create", "--model", "qwen2", "--cluster", "empty"),
    /No server of cluster "empty" carries model "qwen2" \(it has no servers\)/,
  );
});

Deno.test("key update refuses a model, or a cluster, that leaves the key with no server, unless --force", async () => {
  using admin = await setUp();
  const { id } = await admin.json("key", "create", "--model", "llama3");
  assert.match(
    await admin.fails(1, "key", "update", id, "--model", "nosuch2"),
    /^admin: key update: No server carries model "nosuch2" \(carried: .*\); add it to a server first, or give --force$/,
  );
  assert.match(
    await admin.fails(1, "key", "update", id, "--cluster", "c2"),
    /No server of cluster "c2" carries model "llama3"/,
  );
  assert.equal((await admin.json("key", "show", id)).model, "llama3");
  assert.equal((await admin.json("key", "update", id, "--model", "qwen2", "--cluster", "c2")).cluster, "c2");
  assert.equal((await admin.json("key", "update", id, "--model", "nosuch2", "--force")).model, "nosuch2");
  // Other changes to a forced key are not refused for its model.
  assert.equal((await admin.json("key", "update", id, "--rpm", "5")).rpm, 5);
  assert.match(await admin.fails(2, "key", "update", id, "--force"), /nothing to change/);
});

Deno.test("an expiry that has passed is refused; a duration counts from now", async () => {
  using admin = await setUp();
  const now = admin.now.getTime();
  const refused = await admin.fails(2, "key", "create", "--model", "llama3", "--expires", "2026-01-01");
  assert.equal(
    refused,
    "admin: key create: --expires 2026-01-01 is not in the future (it is now 2026-11-22T12:00:00.000Z); " +
      "give a later time or a duration such as 30d (to end a key now, use key revoke)",
  );
  await admin.fails(2, "key", "create", "--model", "llama3", "--expires", admin.now.toISOString());
  await admin.fails(2, "key", "create", "--model", "llama3", "--expires", "0");
  assert.deepEqual(await listKeys(admin.kv), []);

  const month = await admin.json("key", "create", "--model", "llama3", "--expires", "30d");
  assert.equal(month.expiresAt, new Date(now + 30 * 86_400_000).toISOString());
  assert.equal(month.status, "active");
  const updated = await admin.json("key", "update", month.id, "--expires", "12h");
  assert.equal(updated.expiresAt, new Date(now + 12 * 3_600_000).toISOString());
  assert.match(
    await admin.fails(2, "key", "update", month.id, "--expires", "2020-05-01T00:00Z"),
    /not in the/,
  );
  assert.equal((await admin.json("key", "show", month.id)).expiresAt, updated.expiresAt);
  assert.equal("expiresAt" in await admin.json("key", "update", month.id, "--expires", "none"), false);
  assert.match(
    await admin.fails(2, "key", "create", "--model", "llama3", "--expires", "30x"),
    /--expires must be a duration like 30m, 24h or 7d, or an ISO-8601 date or date-time .*got "30x"$/,
  );
});

Deno.test("a flag given twice is refused, unless it is one that builds a list", async () => {
  using admin = await setUp();
  const create = ["key", "create", "--model", "llama3"];
  assert.equal(
    await admin.fails(2, ...create, "--rpm", "5", "--rpm", "6"),
    "admin: key create: --rpm given twice (give it once; only repeatable flags take several)",
  );
  assert.match(await admin.fails(2, ...create, "--rpm=5", "--rpm", "6"), /--rpm given twice/);
  assert.match(
    await admin.fails(2, "key", "create", "--model", "llama3", "--model", "qwen2"),
    /--model given/,
  );
  assert.match(await admin.fails(2, ...create, "--tools", "--tools"), /--tools given twice/);
  assert.match(await admin.fails(2, "server", "add", "--name", "a", "--name", "b"), /--name given twice/);
  assert.match(await admin.fails(2, "usage", "--limit", "1", "--limit", "2"), /--limit given twice/);
  assert.match(await admin.fails(2, "user", "add", "--name", "u", "--json", "--json"), /--json given twice/);
  assert.deepEqual(await listKeys(admin.kv), []);

  const key = await admin.json(...create, "--allow-ip", "10.0.0.1", "--allow-ip", "10.0.0.2");
  assert.deepEqual(key.allowIps, ["10.0.0.1", "10.0.0.2"]);
  const server = await admin.json("server", "update", "gpu2", "--model", "qwen2", "--model", "phi3");
  assert.deepEqual(server.models, [{ tag: "qwen2" }, { tag: "phi3" }]);
});
