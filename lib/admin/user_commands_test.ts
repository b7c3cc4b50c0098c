/** @module `admin user …` through `runAdmin`: quotas, clearing with none and refusal while keys are owned. */
import assert from "node:assert/strict";
import { AdminHarness } from "../../tests/support/admin_harness.ts";

Deno.test("user add stores quotas", async () => {
  using admin = await AdminHarness.open();
  const user = await admin.json("user", "add", "--name", "alice@example.com", "--daily-tokens", "1000");
  assert.deepEqual(user, {
    name: "alice@example.com",
    dailyTokens: 1000,
    createdAt: admin.now.toISOString(),
    updatedAt: admin.now.toISOString(),
  });
  const bob = await admin.json("user", "add", "--name=bob", "--weekly-tokens=5000", "--monthly-tokens=20000");
  assert.equal(bob.weeklyTokens, 5000);
  assert.equal(bob.monthlyTokens, 20000);
});

Deno.test("user add rejects bad quotas, missing names and duplicates", async () => {
  using admin = await AdminHarness.open();
  assert.match(
    await admin.fails(2, "user", "add", "--name", "a", "--daily-tokens", "0"),
    /^admin: user add: --daily-tokens must be a positive integer or "none", got "0"$/,
  );
  assert.match(
    await admin.fails(2, "user", "add", "--name", "a", "--weekly-tokens", "-5"),
    /--weekly-tokens/,
  );
  assert.match(await admin.fails(2, "user", "add"), /--name is required/);
  await admin.json("user", "add", "--name", "a");
  assert.match(await admin.fails(1, "user", "add", "--name", "a"), /A user named "a" already exists/);
});

Deno.test("user list prints a table", async () => {
  using admin = await AdminHarness.open();
  assert.equal(await admin.human("user", "list"), "No users.");
  await admin.json("user", "add", "--name", "alice", "--daily-tokens", "1000");
  const lines = (await admin.human("user", "list")).split("\n");
  assert.match(lines[0], /^NAME +DAILY TOKENS +WEEKLY TOKENS +MONTHLY TOKENS +MAX CONCURRENT$/);
  assert.match(lines[1], /^alice +1000 +- +- +-$/);
  assert.equal((await admin.json("user", "list")).length, 1);
});

Deno.test("user update changes given quotas and clears with none", async () => {
  using admin = await AdminHarness.open();
  await admin.json("user", "add", "--name", "alice", "--daily-tokens", "1000", "--weekly-tokens", "5000");
  const user = await admin.json("user", "update", "alice", "--daily-tokens", "none", "--monthly-tokens", "9");
  assert.equal("dailyTokens" in user, false);
  assert.equal(user.weeklyTokens, 5000);
  assert.equal(user.monthlyTokens, 9);
  assert.match(await admin.fails(2, "user", "update", "alice"), /nothing to change/);
  assert.match(
    await admin.fails(1, "user", "update", "nobody", "--daily-tokens", "1"),
    /No user named "nobody"/,
  );
  assert.match(await admin.human("user", "update", "alice", "--weekly-tokens", "7"), /^weeklyTokens: +7$/m);
});

Deno.test("--max-concurrent on users: set, shown, refused below 1, cleared with none", async () => {
  using admin = await AdminHarness.open();
  assert.equal((await admin.json("user", "add", "--name", "ana", "--max-concurrent", "4")).maxConcurrent, 4);
  assert.match(await admin.human("user", "list"), /^ana +- +- +- +4$/m);
  assert.match(
    await admin.fails(2, "user", "update", "ana", "--max-concurrent", "0"),
    /--max-concurrent must be a positive integer or "none", got "0"/,
  );
  assert.match(await admin.human("user", "update", "ana", "--max-concurrent", "2"), /^maxConcurrent: +2$/m);
  assert.equal(
    "maxConcurrent" in await admin.json("user", "update", "ana", "--max-concurrent", "none"),
    false,
  );
});

Deno.test("user remove is refused while the user owns an active key", async () => {
  using admin = await AdminHarness.open();
  await admin.json("user", "add", "--name", "alice");
  await admin.json("server", "add", "--name", "s", "--url", "http://s:11434", "--model", "m");
  const key = await admin.json("key", "create", "--model", "m", "--user", "alice");
  assert.match(await admin.fails(1, "user", "remove", "alice"), /User "alice" owns key\(s\) key_/);
  await admin.json("key", "revoke", key.id);
  assert.match(await admin.human("user", "remove", "alice"), /^Removed user "alice"\./);
  assert.deepEqual(await admin.json("user", "list"), []);
});
