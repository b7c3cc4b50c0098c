/** @module `admin key …` through `runAdmin`: the secret shown once, the digest never, revocation and clearing. */
import assert from "node:assert/strict";
import { findKeyByDigest, getKey } from "../store/keys.ts";
import { digestSecret } from "../store/key_secret.ts";
import { AdminHarness } from "../../tests/support/admin_harness.ts";

async function withRefs(): Promise<AdminHarness> {
  const admin = await AdminHarness.open();
  await admin.json("server", "add", "--name", "gpu1", "--url", "http://gpu1:11434", "--model", "llama3");
  await admin.json("cluster", "add", "--name", "c1", "--server", "gpu1");
  await admin.json("user", "add", "--name", "alice");
  return admin;
}

Deno.test("key create prints the secret once, with the settings, and never the digest", async () => {
  using admin = await withRefs();
  const created = await admin.json(
    ...["key", "create", "--model", "llama3", "--name", "ci bot", "--cluster", "c1", "--user", "alice"],
    ...["--expires", "2030-01-01T10:00:00+02:00", "--rpm", "60", "--daily-tokens", "1000"],
    ...["--weekly-tokens", "5000", "--monthly-tokens", "20000", "--allow-ip", "10.1.2.3/8"],
    ...["--allow-ip", "2001:DB8::1", "--allow-domain", "*.Example.COM", "--allow-domain", "app.example.org"],
    ...["--tools", "--vision", "--thinking", "--force-json", "--system-prompt", "Be terse."],
    ...["--max-ctx", "8192", "--max-predict", "1024", "--default-ctx", "4096", "--default-predict", "256"],
  );
  assert.deepEqual(Object.keys(created).slice(0, 2), ["id", "key"]);
  assert.match(created.id, /^key_/);
  assert.match(created.key, /^gwk_/);
  assert.equal("digest" in created, false);
  assert.equal(created.status, "active");
  assert.equal(created.name, "ci bot");
  assert.equal(created.expiresAt, "2030-01-01T08:00:00.000Z");
  assert.deepEqual(created.allowIps, ["10.0.0.0/8", "2001:db8::1"]);
  assert.deepEqual(created.allowDomains, ["*.example.com", "app.example.org"]);
  for (const flag of ["tools", "vision", "thinking", "forceJson"]) assert.equal(created[flag], true);
  assert.equal(created.systemPrompt, "Be terse.");
  assert.equal(created.defaultPredict, 256);

  const stored = await getKey(admin.kv, created.id);
  assert.equal(stored.digest, await digestSecret(created.key));
  assert.equal((await findKeyByDigest(admin.kv, stored.digest))?.id, created.id);

  for (const args of [["key", "list"], ["key", "show", created.id]]) {
    for (const output of [await admin.human(...args), JSON.stringify(await admin.json(...args))]) {
      assert.equal(output.includes(created.key), false);
      assert.equal(output.includes(stored.digest), false);
    }
  }
});

Deno.test("key create in human form shows the secret prominently with a warning", async () => {
  using admin = await withRefs();
  const text = await admin.human("key", "create", "--model", "llama3");
  const secret = /^ +(gwk_\S+)$/m.exec(text)?.[1];
  assert.ok(secret);
  assert.match(text, /will not be shown again/);
  assert.match(text, /^tools: +no$/m);
  const stored = (await admin.json("key", "list"))[0];
  assert.equal(stored.tools, false);
  assert.deepEqual(stored.allowIps, []);
  assert.equal(await digestSecret(secret), (await getKey(admin.kv, stored.id)).digest);
});

Deno.test("key create validates values (exit 2) and references (exit 1)", async () => {
  using admin = await withRefs();
  const create = ["key", "create", "--model", "llama3"];
  const bad: [string[], RegExp][] = [
    [["--rpm", "0"], /--rpm must be a positive integer/],
    [["--rpm", "ten"], /--rpm must be a positive integer/],
    [["--max-ctx", "1e3"], /--max-ctx/],
    [["--expires", "tomorrow"], /--expires must be a duration like 30m, 24h or 7d, or an ISO-8601 date/],
    [["--expires", "2026-02-30"], /--expires must be a duration .* or an ISO-8601 date/],
    [["--allow-ip", "10.0.0.0/33"], /--allow-ip must be an IP address or CIDR/],
    [["--allow-ip", "example.com"], /--allow-ip/],
    [["--allow-domain", "https://example.com"], /--allow-domain must be a host name/],
    [["--allow-domain", "*"], /--allow-domain/],
    [["--allow-domain", "example.com:443"], /--allow-domain/],
    [["--allow-domain", "example.com/path"], /--allow-domain/],
    [
      ["--default-ctx", "8192", "--max-ctx", "4096"],
      /--default-ctx \(8192\) must not exceed --max-ctx \(4096\)/,
    ],
    [["--system-prompt", " "], /--system-prompt must not be empty/],
    [["--no-tools"], /unknown flag --no-tools/],
  ];
  for (const [extra, reason] of bad) assert.match(await admin.fails(2, ...create, ...extra), reason);
  assert.match(await admin.fails(2, "key", "create"), /^admin: key create: --model is required$/);
  assert.match(await admin.fails(1, ...create, "--cluster", "ghost"), /No cluster named "ghost"/);
  assert.match(await admin.fails(1, ...create, "--user", "ghost"), /No user named "ghost"/);
  assert.deepEqual(await admin.json("key", "list"), []);
});

Deno.test("key list shows status active, expired and revoked", async () => {
  using admin = await withRefs();
  assert.equal(await admin.human("key", "list"), "No keys.");
  const a = await admin.json("key", "create", "--model", "llama3", "--name", "first", "--cluster", "c1");
  admin.now = new Date(admin.now.getTime() + 1000);
  const b = await admin.json(
    "key",
    "create",
    "--model",
    "llama3",
    "--expires",
    "2026-12-01",
    "--user",
    "alice",
  );
  admin.now = new Date(admin.now.getTime() + 1000);
  const c = await admin.json("key", "create", "--model", "llama3");
  await admin.json("key", "revoke", c.id);
  admin.now = new Date("2026-12-02T00:00:00Z");
  const listed = await admin.json("key", "list");
  assert.deepEqual(listed.map((k: { id: string; status: string }) => [k.id, k.status]), [
    [a.id, "active"],
    [b.id, "expired"],
    [c.id, "revoked"],
  ]);
  const lines = (await admin.human("key", "list")).split("\n");
  assert.match(lines[0], /^ID +NAME +MODEL +CLUSTER +USER +STATUS +EXPIRES$/);
  assert.match(lines[1], new RegExp(`^${a.id} +first +llama3 +c1 +- +active +-$`));
  assert.match(lines[2], new RegExp(`^${b.id} +- +llama3 +- +alice +expired +2026-12-01T00:00:00\\.000Z$`));
  assert.match(lines[3], new RegExp(`^${c.id} .* revoked +-$`));
});

Deno.test("key show prints one record; unknown id exits 1", async () => {
  using admin = await withRefs();
  const created = await admin.json("key", "create", "--model", "llama3", "--allow-ip", "192.168.1.7");
  const text = await admin.human("key", "show", created.id);
  assert.match(text, new RegExp(`^id: +${created.id}$`, "m"));
  assert.match(text, /^allowIps: +192\.168\.1\.7$/m);
  assert.match(text, /^hint: +gwk_/m);
  assert.equal((await admin.json("key", "show", created.id)).hint, created.hint);
  assert.match(await admin.fails(1, "key", "show", "key_nope"), /^admin: key show: No key with id key_nope$/);
});

Deno.test("key update changes only given flags, --no-* turns off, none clears", async () => {
  using admin = await withRefs();
  const created = await admin.json(
    ...["key", "create", "--model", "llama3", "--name", "bot", "--cluster", "c1", "--user", "alice"],
    ...["--expires", "2030-01-01", "--rpm", "60", "--tools", "--vision", "--allow-ip", "10.0.0.0/8"],
    ...["--allow-domain", "example.com", "--system-prompt", "Hi"],
  );
  const updated = await admin.json(
    ...["key", "update", created.id, "--no-tools", "--thinking", "--expires", "none", "--cluster", "none"],
    ...[
      "--rpm",
      "none",
      "--allow-ip",
      "none",
      "--allow-domain",
      "a.example",
      "--allow-domain",
      "*.b.example",
    ],
    ...["--system-prompt", "none", "--daily-tokens", "50"],
  );
  assert.equal(updated.tools, false);
  assert.equal(updated.vision, true);
  assert.equal(updated.thinking, true);
  for (const field of ["expiresAt", "cluster", "rpm", "systemPrompt"]) assert.equal(field in updated, false);
  assert.deepEqual(updated.allowIps, []);
  assert.deepEqual(updated.allowDomains, ["a.example", "*.b.example"]);
  assert.equal(updated.dailyTokens, 50);
  assert.equal(updated.user, "alice");
  assert.equal(updated.name, "bot");
  assert.equal("digest" in updated, false);
  assert.equal("key" in updated, false);

  const shown = await admin.json("key", "show", created.id);
  assert.equal(shown.tools, false);
  assert.equal("expiresAt" in shown, false);
  const stored = await getKey(admin.kv, created.id);
  assert.equal((await findKeyByDigest(admin.kv, stored.digest))?.tools, false);
});

Deno.test("key update refuses contradictions, unknown refs and empty changes", async () => {
  using admin = await withRefs();
  const { id } = await admin.json("key", "create", "--model", "llama3", "--max-ctx", "4096");
  assert.match(await admin.fails(2, "key", "update", id, "--tools", "--no-tools"), /contradict/);
  assert.match(await admin.fails(2, "key", "update", id), /nothing to change/);
  assert.match(
    await admin.fails(2, "key", "update", id, "--default-ctx", "9000"),
    /must not exceed --max-ctx/,
  );
  assert.match(await admin.fails(1, "key", "update", id, "--cluster", "ghost"), /No cluster named "ghost"/);
  assert.match(await admin.fails(1, "key", "update", "key_nope", "--rpm", "5"), /No key with id key_nope/);
  assert.match(await admin.fails(2, "key", "update", id, "--rpm", "-1"), /--rpm/);
  assert.equal((await admin.json("key", "update", id, "--model", "qwen2", "--force")).model, "qwen2");
});

Deno.test("key revoke removes the key from authentication but keeps the record", async () => {
  using admin = await withRefs();
  const created = await admin.json("key", "create", "--model", "llama3");
  const digest = await digestSecret(created.key);
  assert.ok(await findKeyByDigest(admin.kv, digest));
  const text = await admin.human("key", "revoke", created.id);
  assert.match(text, new RegExp(`^Revoked key ${created.id}\\.`));
  assert.match(text, /^status: +revoked$/m);
  assert.equal(await findKeyByDigest(admin.kv, digest), null);
  const shown = await admin.json("key", "show", created.id);
  assert.equal(shown.status, "revoked");
  assert.equal(shown.revokedAt, admin.now.toISOString());
  assert.match(await admin.fails(1, "key", "revoke", created.id), /already revoked/);
  assert.match(await admin.fails(1, "key", "update", created.id, "--tools"), /revoked and cannot be changed/);
  assert.match(await admin.fails(1, "key", "revoke", "key_nope"), /No key with id key_nope/);
});

Deno.test("key --priority: high or low is kept, normal is the default and clears it, anything else exits 2", async () => {
  using admin = await withRefs();
  const created = await admin.json("key", "create", "--model", "llama3", "--priority", "low");
  assert.equal(created.priority, "low");
  assert.equal((await getKey(admin.kv, created.id)).priority, "low");
  assert.equal((await admin.json("key", "update", created.id, "--priority", "high")).priority, "high");
  assert.equal((await admin.json("key", "update", created.id, "--priority", "normal")).priority, undefined);
  assert.equal((await getKey(admin.kv, created.id)).priority, undefined);
  assert.match(await admin.human("key", "show", created.id), /^priority: +normal$/m);
  const res = await admin.run("key", "update", created.id, "--priority", "urgent");
  assert.equal(res.code, 2);
  assert.match(res.err.join(), /--priority must be one of high, normal, low, got "urgent"/);
});

Deno.test("key --max-concurrent: set on create, changed and cleared on update, at least 1", async () => {
  using admin = await withRefs();
  const created = await admin.json("key", "create", "--model", "llama3", "--max-concurrent", "2");
  assert.equal(created.maxConcurrent, 2);
  assert.match(await admin.human("key", "show", created.id), /^maxConcurrent: +2$/m);
  assert.match(
    await admin.fails(2, "key", "create", "--model", "llama3", "--max-concurrent", "0"),
    /--max-concurrent must be a positive integer or "none", got "0"/,
  );
  assert.equal((await admin.json("key", "update", created.id, "--max-concurrent", "5")).maxConcurrent, 5);
  const cleared = await admin.json("key", "update", created.id, "--max-concurrent", "none");
  assert.equal("maxConcurrent" in cleared, false);
  assert.equal("maxConcurrent" in await getKey(admin.kv, created.id), false);
});
