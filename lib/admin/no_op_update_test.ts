/**
 * @module An update that changes nothing says so and is not written: no audit entry, no new `updatedAt`, no
 * store generation bump for the gateways to reload. One that changes something is written and audited as before.
 */
import assert from "node:assert/strict";
import { AdminHarness } from "../../tests/support/admin_harness.ts";

async function setUp(): Promise<AdminHarness> {
  const admin = await AdminHarness.open();
  await admin.json(
    ...["server", "add", "--name", "gpu1", "--url", "http://gpu1:11434", "--model", "llama3=assistant"],
    ...["--max-ctx", "4096", "--api-key", "sk-one"],
  );
  await admin.json("cluster", "add", "--name", "c1", "--server", "gpu1");
  await admin.json("user", "add", "--name", "alice", "--daily-tokens", "100");
  return admin;
}

async function auditCount(admin: AdminHarness): Promise<number> {
  return (await admin.json("audit")).length;
}

Deno.test("an update to the values a record already has says nothing changed and leaves no audit entry", async () => {
  using admin = await setUp();
  const { id } = await admin.json(
    ...["key", "create", "--model", "llama3", "--rpm", "5", "--tools", "--allow-ip", "10.0.0.1"],
  );
  const before = await auditCount(admin);
  const server = await admin.json("server", "show", "gpu1");
  const key = await admin.json("key", "show", id);
  admin.now = new Date(admin.now.getTime() + 60_000);

  const noOps: [string[], RegExp][] = [
    [["server", "update", "gpu1", "--max-ctx", "4096", "--model", "llama3=assistant"], /server "gpu1"/],
    [["server", "update", "gpu1", "--api-key", "sk-one", "--enabled"], /server "gpu1"/],
    [["server", "update", "gpu1", "--slots", "none", "--kind", "ollama"], /server "gpu1"/],
    [["server", "enable", "gpu1"], /server "gpu1" is already enabled/],
    [["cluster", "update", "c1", "--server", "gpu1"], /cluster "c1"/],
    [["user", "update", "alice", "--daily-tokens", "100", "--weekly-tokens", "none"], /user "alice"/],
    [["key", "update", id, "--rpm", "5", "--tools", "--allow-ip", "10.0.0.1", "--cluster", "none"], /key /],
  ];
  for (const [args, target] of noOps) {
    const text = await admin.human(...args);
    assert.match(text.split("\n")[0], /^Nothing changed: /, args.join(" "));
    assert.match(text.split("\n")[0], target, args.join(" "));
  }
  assert.equal(await auditCount(admin), before, "no audit entry for an update that changed nothing");
  assert.deepEqual(await admin.json("server", "show", "gpu1"), server, "updatedAt stays");
  assert.deepEqual(await admin.json("key", "show", id), key);
  // Under --json the answer is still the record, as for any update.
  assert.deepEqual(await admin.json("server", "update", "gpu1", "--max-ctx", "4096"), server);

  await admin.json("server", "disable", "gpu1");
  assert.match(
    await admin.human("server", "disable", "gpu1"),
    /^Nothing changed: server "gpu1" is already disabled\./,
  );
  const changed = await admin.json("user", "update", "alice", "--daily-tokens", "200");
  assert.equal(changed.dailyTokens, 200);
  assert.equal(changed.updatedAt, admin.now.toISOString());
  const audit = await admin.json("audit");
  assert.equal(audit.length, before + 2, "real changes are still audited");
  assert.deepEqual(audit[0].changes.dailyTokens, { before: 100, after: 200 });
});

Deno.test("a no-op update is not written to the store at all", async () => {
  using admin = await setUp();
  const entries = async () =>
    (await Array.fromAsync(admin.kv.list({ prefix: [] }))).map((e) => [e.key, e.versionstamp]);
  const before = await entries();
  await admin.human("server", "update", "gpu1", "--max-ctx", "4096");
  await admin.human("server", "enable", "gpu1");
  await admin.human("user", "update", "alice", "--daily-tokens", "100");
  await admin.human("cluster", "update", "c1", "--server", "gpu1");
  assert.deepEqual(await entries(), before, "no key written, not even the generation the gateways poll");
});
