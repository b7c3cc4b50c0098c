/** @module `admin audit`: every change, newest first, with before/after and never a secret or digest. */
import assert from "node:assert/strict";
import { getKey } from "../store/keys.ts";
import { AdminHarness } from "../../tests/support/admin_harness.ts";

Deno.test("every change is audited with its fields before and after, and no secret", async () => {
  using admin = await AdminHarness.open();
  await admin.json(
    "server",
    "add",
    "--name",
    "gpu1",
    "--url",
    "http://gpu1:11434",
    "--model",
    "m1",
    "--api-key",
    "sk-backend-secret",
  );
  await admin.json("server", "disable", "gpu1");
  await admin.json("user", "add", "--name", "alice", "--daily-tokens", "100");
  const key = await admin.json("key", "create", "--model", "m1", "--user", "alice");
  const digestBefore = (await getKey(admin.kv, key.id)).digest;
  admin.now = new Date("2026-11-22T13:00:00.000Z");
  const rotated = await admin.json("key", "rotate", key.id, "--grace", "1h");
  await admin.json("key", "list");
  await admin.fails(2, "key", "update", key.id, "--rpm", "zero");

  const records = await admin.json("audit");
  assert.deepEqual(
    records.map((r: { action: string }) => r.action),
    ["key.rotate", "key.create", "user.add", "server.disable", "server.add"],
    "newest first; reads and refused changes leave nothing",
  );
  assert.equal(records[0].target, key.id);
  assert.deepEqual(records[0].actor, { kind: "cli" });
  assert.equal(records[0].changes.previousValidUntil.after, "2026-11-22T14:00:00.000Z");
  assert.deepEqual(records[3].changes, { enabled: { before: true, after: false } });
  assert.deepEqual(records[4].changes.hasApiKey, { after: true });

  const text = JSON.stringify(records) + await admin.human("audit");
  const digestAfter = (await getKey(admin.kv, key.id)).digest;
  for (const secret of [key.key, rotated.key, digestBefore, digestAfter, "sk-backend-secret"]) {
    assert.equal(text.includes(secret), false, "no secret or digest in the audit trail");
  }

  const since = await admin.json("audit", "--since", "2026-11-22T12:30:00Z");
  assert.deepEqual(since.map((r: { action: string }) => r.action), ["key.rotate"]);
  const lastHour = await admin.json("audit", "--since", "45m");
  assert.deepEqual(
    lastHour.map((r: { action: string }) => r.action),
    ["key.rotate"],
    "a duration counts back",
  );
  assert.equal((await admin.json("audit", "--limit", "2")).length, 2);
  assert.match(
    await admin.fails(2, "audit", "--since", "yesterday"),
    /--since must be a duration like 30m, 24h or 7d, or an ISO-8601/,
  );
  assert.match(await admin.human("audit"), /server\.disable +gpu1 +enabled: true → false/);
});
