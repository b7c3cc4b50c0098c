/** @module The audit entry rides in the commit that makes the change: none for a failed commit, one per change. */
import assert from "node:assert/strict";
import { NamedRecords } from "../store/named_records.ts";
import type { UserRecord } from "../store/records.ts";
import { auditingStore, type Describe } from "./capture.ts";
import { AUDIT_PREFIX, type AuditRecord, listAudit } from "./mod.ts";

const describe: Describe = (key, value) =>
  key[0] === "users" ? { target: String(key[1]), view: { ...value as Record<string, unknown> } } : undefined;

const entry = {
  time: () => new Date("2026-11-24T10:00:00Z"),
  actor: { kind: "cli" as const },
  action: "user.update",
};

Deno.test("a commit lost to a concurrent write records nothing; the retry records the change once", async () => {
  using kv = await Deno.openKv(":memory:");
  await new NamedRecords<UserRecord>(kv, "users", "user").add({ name: "alice", dailyTokens: 1 });
  const users = new NamedRecords<UserRecord>(auditingStore(kv, describe, entry), "users", "user");
  let raced = false;
  await users.update("alice", (current) => {
    if (!raced) {
      raced = true;
      // Another writer gets there between this read and this commit, so the first commit fails.
      return { ...current, dailyTokens: 99 };
    }
    return { ...current, dailyTokens: current.dailyTokens! + 1 };
  }, async () => {
    if (raced && (await kv.get<UserRecord>(["users", "alice"])).value?.dailyTokens === 1) {
      await kv.set(["users", "alice"], {
        ...(await kv.get<UserRecord>(["users", "alice"])).value!,
        dailyTokens: 5,
      });
    }
  });
  const records: AuditRecord[] = await listAudit(kv);
  assert.equal(records.length, 1);
  assert.deepEqual(records[0].changes, { dailyTokens: { before: 5, after: 6 } });
  assert.equal(records[0].target, "alice");

  await assert.rejects(() => users.add({ name: "alice" }), /already exists/);
  const all = [];
  for await (const e of kv.list({ prefix: [AUDIT_PREFIX] })) all.push(e);
  assert.equal(all.length, 1, "a refused write leaves no entry");
});

const serverDescribe: Describe = (key, value) => {
  if (key[0] !== "servers") return undefined;
  const { apiKey, ...view } = value as Record<string, unknown>;
  return { target: String(key[1]), view, secrets: { apiKey } };
};

Deno.test("a secret's change is recorded without its value; a rewrite that changes nothing leaves no entry", async () => {
  using kv = await Deno.openKv(":memory:");
  const write = async (value: Record<string, unknown>) => {
    const store = auditingStore(kv, serverDescribe, { ...entry, action: "server.update" });
    const current = await store.get(["servers", "gpu"]);
    await store.atomic().check(current).set(["servers", "gpu"], value).commit();
  };
  await write({ name: "gpu", weight: 1, apiKey: "sk-one" });
  await write({ name: "gpu", weight: 1, apiKey: "sk-two" });
  await write({ name: "gpu", weight: 1, apiKey: "sk-two", updatedAt: "later" });
  await write({ name: "gpu", weight: 2 });
  const records = await listAudit(kv);
  assert.deepEqual(records.map((r) => r.changes), [
    { weight: { before: 1, after: 2 }, apiKey: { before: "set" } },
    { apiKey: { before: "set", after: "changed" } },
    { name: { after: "gpu" }, weight: { after: 1 }, apiKey: { after: "set" } },
  ]);
  assert.equal(JSON.stringify(records).includes("sk-"), false);
  assert.equal((await kv.get(["servers", "gpu"])).value !== null, true, "the rewrite itself was made");
});
