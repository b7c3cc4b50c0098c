/** @module `admin usage` through `runAdmin`: records, filters, totals per period, and refusals. */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { UsageLedger } from "../usage/ledger.ts";
import type { UsageRecord } from "../usage/types.ts";
import { sample } from "../usage/test_support.ts";
import { AdminHarness } from "./test_harness.ts";

const PERIODS = { day: "2026-11-22", week: "2026-W47", month: "2026-11" };

/** A user with a key, and usage for it today, earlier this week, last week and last month. */
async function seed(admin: AdminHarness): Promise<{ keyId: string; records: UsageRecord[] }> {
  await admin.json("user", "add", "--name", "alice");
  const { id: keyId } = await admin.json("key", "create", "--model", "llama3", "--user", "alice");
  const rec = (time: string, promptTokens: number, extra: Partial<UsageRecord> = {}) =>
    sample({ time, keyId, user: "alice", promptTokens, completionTokens: 0, ...extra });
  const records = [
    rec("2026-10-31T23:00:00.000Z", 1000), // last month, week 44
    rec("2026-11-15T10:00:00.000Z", 200), // this month, last week (W46)
    rec("2026-11-16T00:00:00.000Z", 30), // Monday: this week
    sample({ time: "2026-11-22T08:00:00.000Z", keyId: undefined, user: undefined, status: "rejected" }),
    rec("2026-11-22T09:00:00.000Z", 4, { stream: true, status: "partial", ttfbMs: undefined }),
    sample({ time: "2026-11-22T10:00:00.000Z", keyId: "key_other", user: undefined, promptTokens: 7 }),
  ];
  const ledger = new UsageLedger(admin.kv);
  for (const r of records) ledger.record(r);
  await ledger.close();
  return { keyId, records };
}

Deno.test("usage on an empty store", async () => {
  using admin = await AdminHarness.open();
  assert.deepEqual(await admin.json("usage"), {
    records: [],
    totals: { keys: {}, users: {} },
    periods: PERIODS,
  });
  assert.equal(
    await admin.human("usage"),
    [
      "No usage records.",
      "",
      "Token totals for day 2026-11-22 (until 2026-11-23T00:00:00.000Z), week 2026-W47 " +
      "(until 2026-11-23T00:00:00.000Z), month 2026-11 (until 2026-12-01T00:00:00.000Z):",
      "No token totals.",
    ].join("\n"),
  );
});

Deno.test("usage lists every record oldest first with totals for the keys and users in them", async () => {
  using admin = await AdminHarness.open();
  const { keyId, records } = await seed(admin);
  const all = await admin.json("usage");
  assert.deepEqual(all.records, JSON.parse(JSON.stringify(records)));
  assert.deepEqual(all.totals, {
    keys: {
      [keyId]: { day: 4, week: 34, month: 234 },
      key_other: { day: 12, week: 12, month: 12 },
    },
    users: { alice: { day: 4, week: 34, month: 234 } },
  });
  assert.deepEqual(all.periods, PERIODS);

  const lines = (await admin.human("usage")).split("\n");
  assert.match(
    lines[0],
    /^TIME +KEY +USER +MODEL +SERVER +FORMAT +STREAM +STATUS +PROMPT +COMPLETION +LATENCY MS +TTFB MS$/,
  );
  assert.match(
    lines[4],
    /^2026-11-22T08:00:00.000Z +- +- +llama3 +gpu1 +openai +no +rejected +10 +5 +120 +30$/,
  );
  assert.match(lines[5], / +yes +partial +4 +0 +120 +-$/);
  assert.ok(lines.includes(`key    ${keyId}  4    34    234`), lines.join("\n"));
  assert.match(lines.at(-1)!, /^user +alice +4 +34 +234$/);
});

Deno.test("usage filters by key, user, since and limit", async () => {
  using admin = await AdminHarness.open();
  const { keyId, records } = await seed(admin);
  const times = (out: { records: UsageRecord[] }) => out.records.map((r) => r.time);

  const byKey = await admin.json("usage", "--key", keyId);
  assert.deepEqual(times(byKey), [0, 1, 2, 4].map((i) => records[i].time));
  assert.deepEqual(byKey.totals, { keys: { [keyId]: { day: 4, week: 34, month: 234 } }, users: {} });

  const byUser = await admin.json("usage", "--user", "alice");
  assert.deepEqual(times(byUser), times(byKey));
  assert.deepEqual(byUser.totals, { keys: {}, users: { alice: { day: 4, week: 34, month: 234 } } });

  const both = await admin.json("usage", "--key", keyId, "--user", "alice", "--since", "2026-11-16");
  assert.deepEqual(times(both), [records[2].time, records[4].time]);
  assert.deepEqual(Object.keys(both.totals.keys), [keyId]);
  assert.deepEqual(Object.keys(both.totals.users), ["alice"]);

  const today = await admin.json("usage", "--since", "2026-11-22T09:00:00+00:00");
  assert.deepEqual(times(today), [records[4].time, records[5].time]);
  assert.deepEqual(Object.keys(today.totals.keys).sort(), [keyId, "key_other"].sort());

  const limited = await admin.json("usage", "--limit", "2");
  assert.deepEqual(times(limited), [records[0].time, records[1].time]);
  assert.deepEqual(limited.totals.users, { alice: { day: 4, week: 34, month: 234 } });
});

Deno.test("usage refuses unknown names and bad flags with one line", async () => {
  using admin = await AdminHarness.open();
  await seed(admin);
  assert.equal(await admin.fails(1, "usage", "--key", "key_nope"), "admin: usage: No key with id key_nope");
  assert.equal(await admin.fails(1, "usage", "--user", "nobody"), 'admin: usage: No user named "nobody"');
  assert.match(
    await admin.fails(2, "usage", "--since", "yesterday"),
    /^admin: usage: --since must be an ISO-8601 date or date-time .*got "yesterday"$/,
  );
  assert.match(
    await admin.fails(2, "usage", "--limit", "0"),
    /^admin: usage: --limit must be a positive integer/,
  );
  assert.equal(
    await admin.fails(2, "usage", "--bogus"),
    "admin: usage: unknown flag --bogus (accepted: --key, --user, --since, --limit, --json)",
  );
  assert.equal(await admin.fails(2, "usage", "list"), 'admin: usage: unexpected argument "list"');
});

Deno.test("deno task admin usage reads what a ledger wrote to a KV file", async () => {
  const repo = fileURLToPath(new URL("../../", import.meta.url));
  const dir = await Deno.makeTempDir({ prefix: "admin_usage_test_" });
  try {
    const kv = await Deno.openKv(`${dir}/gateway.kv`);
    const ledger = new UsageLedger(kv);
    ledger.record(sample({ time: new Date().toISOString(), keyId: "key_x", user: "bob" }));
    await ledger.close();
    kv.close();
    const output = await new Deno.Command(Deno.execPath(), {
      args: ["task", "--quiet", "admin", "usage", "--json"],
      env: { GATEWAY_KV: `${dir}/gateway.kv`, NO_COLOR: "1" },
      cwd: repo,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(output.stderr);
    assert.equal(output.code, 0, stderr);
    assert.equal(stderr, "");
    const result = JSON.parse(new TextDecoder().decode(output.stdout));
    assert.equal(result.records.length, 1);
    assert.deepEqual(result.totals.keys, { key_x: { day: 15, week: 15, month: 15 } });
    assert.deepEqual(result.totals.users, { bob: { day: 15, week: 15, month: 15 } });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
