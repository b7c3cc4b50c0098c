/** @module `admin cluster …` through `runAdmin`: membership checks and refusal while a key uses the cluster. */
import assert from "node:assert/strict";
import { AdminHarness } from "../../tests/support/admin_harness.ts";

async function withServers(...names: string[]): Promise<AdminHarness> {
  const admin = await AdminHarness.open();
  for (const name of names) {
    await admin.json("server", "add", "--name", name, "--url", `http://${name}:11434`, "--model", "m");
  }
  return admin;
}

Deno.test("cluster add names existing servers, deduplicated", async () => {
  using admin = await withServers("a", "b");
  const cluster = await admin.json(
    "cluster",
    "add",
    "--name",
    "c1",
    "--server",
    "a",
    "--server",
    "b",
    "--server",
    "a",
  );
  assert.equal(cluster.name, "c1");
  assert.deepEqual(cluster.servers, ["a", "b"]);
  assert.deepEqual((await admin.json("cluster", "add", "--name", "empty")).servers, []);
});

Deno.test("cluster add refuses unknown servers and duplicates with exit 1", async () => {
  using admin = await withServers("a");
  assert.match(
    await admin.fails(1, "cluster", "add", "--name", "c1", "--server", "a", "--server", "ghost"),
    /^admin: cluster add: No server named "ghost"$/,
  );
  await admin.json("cluster", "add", "--name", "c1", "--server", "a");
  assert.match(await admin.fails(1, "cluster", "add", "--name", "c1"), /already exists/);
  assert.match(await admin.fails(2, "cluster", "add"), /--name is required/);
  assert.match(
    await admin.fails(2, "cluster", "add", "--name", "c2", "--weight", "1"),
    /unknown flag --weight/,
  );
});

Deno.test("cluster list prints a table and JSON", async () => {
  using admin = await withServers("a", "b");
  assert.equal(await admin.human("cluster", "list"), "No clusters.");
  await admin.json("cluster", "add", "--name", "c1", "--server", "a", "--server", "b");
  await admin.json("cluster", "add", "--name", "c2");
  assert.equal(await admin.human("cluster", "list"), "NAME  SERVERS\nc1    a, b\nc2    -");
  const clusters = await admin.json("cluster", "list");
  assert.deepEqual(clusters.map((c: { name: string }) => c.name), ["c1", "c2"]);
});

Deno.test("cluster update replaces the member list", async () => {
  using admin = await withServers("a", "b", "c");
  await admin.json("cluster", "add", "--name", "c1", "--server", "a", "--server", "b");
  assert.deepEqual((await admin.json("cluster", "update", "c1", "--server", "c")).servers, ["c"]);
  assert.match(
    await admin.fails(1, "cluster", "update", "c1", "--server", "ghost"),
    /No server named "ghost"/,
  );
  assert.match(await admin.fails(2, "cluster", "update", "c1"), /nothing to change/);
  assert.deepEqual((await admin.json("cluster", "update", "c1", "--server", "none")).servers, []);
  assert.match(await admin.fails(1, "cluster", "update", "nope", "--server", "a"), /No cluster named "nope"/);
  assert.match(
    await admin.human("cluster", "update", "c1", "--server", "a"),
    /^Updated cluster "c1"\.\nname: +c1/,
  );
});

Deno.test("cluster remove is refused while an active key uses the cluster", async () => {
  using admin = await withServers("a");
  await admin.json("cluster", "add", "--name", "c1", "--server", "a");
  const key = await admin.json("key", "create", "--model", "m", "--cluster", "c1");
  assert.match(await admin.fails(1, "cluster", "remove", "c1"), /Cluster "c1" is used by key\(s\) key_/);
  await admin.json("key", "revoke", key.id);
  assert.equal((await admin.json("cluster", "remove", "c1")).name, "c1");
  assert.match(await admin.fails(1, "cluster", "remove", "c1"), /No cluster named "c1"/);
  assert.match(await admin.fails(2, "cluster", "show", "c1"), /unknown verb "show"/);
});
