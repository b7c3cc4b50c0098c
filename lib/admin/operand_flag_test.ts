/**
 * @module The record a command acts on, named either way: `server update NAME` (the contract's form) or
 * `server update --name NAME`, as `server add --name NAME` does; `key show ID` or `key show --id ID`.
 */
import assert from "node:assert/strict";
import { AdminHarness } from "../../tests/support/admin_harness.ts";

async function setUp(): Promise<AdminHarness> {
  const admin = await AdminHarness.open();
  await admin.json("server", "add", "--name", "gpu1", "--url", "http://gpu1:11434", "--model", "llama3");
  await admin.json("server", "add", "--name", "gpu2", "--url", "http://gpu2:11434", "--model", "llama3");
  await admin.json("cluster", "add", "--name", "c1", "--server", "gpu1");
  await admin.json("user", "add", "--name", "alice");
  return admin;
}

Deno.test("--name stands for NAME on every verb that takes one, alongside the positional form", async () => {
  using admin = await setUp();
  assert.equal((await admin.json("server", "update", "--name", "gpu1", "--weight", "3")).weight, 3);
  assert.equal((await admin.json("server", "update", "gpu1", "--weight", "4")).weight, 4);
  assert.equal((await admin.json("server", "show", "--name", "gpu1")).weight, 4);
  assert.equal((await admin.json("server", "disable", "--name", "gpu1")).enabled, false);
  assert.equal((await admin.json("server", "enable", "--name=gpu1")).enabled, true);
  assert.equal(
    (await admin.json("user", "update", "--name", "alice", "--daily-tokens", "50")).dailyTokens,
    50,
  );
  assert.equal((await admin.json("user", "update", "alice", "--daily-tokens", "60")).dailyTokens, 60);
  const cluster = await admin.json(
    "cluster",
    "update",
    "--name",
    "c1",
    "--server",
    "gpu1",
    "--server",
    "gpu2",
  );
  assert.deepEqual(cluster.servers, ["gpu1", "gpu2"]);
  await admin.json("cluster", "update", "--name", "c1", "--server", "none");
  assert.equal((await admin.json("cluster", "remove", "--name", "c1")).name, "c1");
  assert.equal((await admin.json("server", "remove", "--name", "gpu2")).name, "gpu2");
  assert.equal((await admin.json("user", "remove", "--name", "alice")).name, "alice");

  const audit = await admin.json("audit");
  assert.deepEqual(audit.slice(0, 3).map((r: { target: string }) => r.target), ["alice", "gpu2", "c1"]);
});

Deno.test("--id stands for a key's ID; --name stays the key's label", async () => {
  using admin = await setUp();
  const { id } = await admin.json("key", "create", "--model", "llama3", "--name", "bot");
  assert.equal((await admin.json("key", "show", "--id", id)).name, "bot");
  const renamed = await admin.json("key", "update", "--id", id, "--name", "ci bot");
  assert.equal(renamed.id, id);
  assert.equal(renamed.name, "ci bot");
  assert.equal((await admin.json("key", "rotate", "--id", id, "--grace", "0")).id, id);
  assert.equal((await admin.json("key", "revoke", "--id", id)).status, "revoked");
});

Deno.test("the name given both ways, twice, or not at all is a usage error", async () => {
  using admin = await setUp();
  assert.equal(
    await admin.fails(2, "server", "update", "gpu1", "--name", "gpu2", "--weight", "2"),
    'admin: server update: NAME given twice (as "gpu1" and as --name)',
  );
  assert.match(await admin.fails(2, "user", "update", "--name", "a", "--name", "b"), /--name given twice/);
  assert.equal(
    await admin.fails(2, "server", "show"),
    "admin: server show: missing NAME (give it as NAME or --name)",
  );
  assert.equal(await admin.fails(2, "key", "show"), "admin: key show: missing ID (give it as ID or --id)");
  assert.match(await admin.fails(2, "server", "update", "--weight", "2"), /missing NAME/);
  assert.match(await admin.fails(2, "server", "update", "--name", "gpu1"), /nothing to change/);
  assert.match(
    await admin.fails(1, "server", "update", "--name", "nope", "--weight", "2"),
    /No server named/,
  );
  // Verbs without an operand keep refusing a flag they do not take.
  assert.match(await admin.fails(2, "server", "list", "--name", "gpu1"), /unknown flag --name/);
});
