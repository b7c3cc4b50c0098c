/** @module `admin usage` through `runAdmin`: records, filters, totals per period, and refusals. */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { UsageLedger } from "../usage/ledger.ts";
import { USAGE_PREFIX } from "../usage/kv_layout.ts";
import type { UsageRecord } from "../usage/types.ts";
import { sample } from "../../tests/support/usage_ledger.ts";
import { AdminHarness } from "../../tests/support/admin_harness.ts";

const PERIODS = { day: "2026-11-22", week: "2026-W47", month: "2026-11" };

/** A user with a key, and usage for it today, earlier this week, last week and last month. */
async function seed(admin: AdminHarness): Promise<{ keyId: string; records: UsageRecord[] }> {
  await admin.json("user", "add", "--name", "alice");
  await admin.json("server", "add", "--name", "gpu1", "--url", "http://gpu1:11434", "--model", "llama3");
  const { id: keyId } = await admin.json("key", "create", "--model", "llama3", "--user", "alice");
  const rec = (time: string, promptTokens: number, extra: Partial<UsageRecord> = {}) =>
    sample({ time, keyId, user: "alice", promptTokens, completionTokens: 0, ...extra });
  const records = [
    rec("2026-10-31T23:00:00.000Z", 1000), // last month, week 44
    rec("2026-11-15T10:00:00.000Z", 200), // this month, last week (W46)
    rec("2026-11-16T00:00:00.000Z", 30), // Monday: this week
    sample({
      time: "2026-11-22T08:00:00.000Z",
      keyId: undefined,
      user: undefined,
      status: "rejected",
      httpStatus: 401,
      errorCode: "invalid_api_key",
    }),
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

Deno.test("usage lists every record newest first with totals for the keys and users in them", async () => {
  using admin = await AdminHarness.open();
  const { keyId, records } = await seed(admin);
  const all = await admin.json("usage");
  assert.deepEqual(all.records, JSON.parse(JSON.stringify(records.toReversed())));
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
    /^TIME +KEY +USER +MODEL +SERVER +FORMAT +STREAM +STATUS +HTTP +CODE +REQS +PROMPT +COMPLETION +LATENCY MS +TTFB MS$/,
  );
  assert.match(lines[1], /^2026-11-22T10:00:00.000Z +key_other +- .* +ok +200 +- +1 +7 +5 +120 +30$/);
  assert.match(lines[2], /^2026-11-22T09:00:00.000Z .* +yes +partial +200 +- +1 +4 +0 +120 +-$/);
  assert.match(
    lines[3],
    /^2026-11-22T08:00:00.000Z +- +- +llama3 +gpu1 +openai +no +rejected +401 +invalid_api_key +1 +10 +5 +120 +30$/,
  );
  assert.match(lines[6], /^2026-10-31T23:00:00.000Z /);
  assert.ok(lines.includes(`key    ${keyId}  4    34    234`), lines.join("\n"));
  assert.match(lines.at(-1)!, /^user +alice +4 +34 +234$/);
});

Deno.test("usage filters by key, user, since and limit", async () => {
  using admin = await AdminHarness.open();
  const { keyId, records } = await seed(admin);
  const times = (out: { records: UsageRecord[] }) => out.records.map((r) => r.time);

  const byKey = await admin.json("usage", "--key", keyId);
  assert.deepEqual(times(byKey), [4, 2, 1, 0].map((i) => records[i].time));
  assert.deepEqual(byKey.totals, { keys: { [keyId]: { day: 4, week: 34, month: 234 } }, users: {} });

  const byUser = await admin.json("usage", "--user", "alice");
  assert.deepEqual(times(byUser), times(byKey));
  assert.deepEqual(byUser.totals, { keys: {}, users: { alice: { day: 4, week: 34, month: 234 } } });

  const both = await admin.json("usage", "--key", keyId, "--user", "alice", "--since", "2026-11-16");
  assert.deepEqual(times(both), [records[4].time, records[2].time]);
  assert.deepEqual(Object.keys(both.totals.keys), [keyId]);
  assert.deepEqual(Object.keys(both.totals.users), ["alice"]);

  const today = await admin.json("usage", "--since", "2026-11-22T09:00:00+00:00");
  assert.deepEqual(times(today), [records[5].time, records[4].time]);

  // A duration counts back from now (12:00): the last day holds today's three records.
  const lastDay = await admin.json("usage", "--since", "24h");
  assert.deepEqual(times(lastDay), [5, 4, 3].map((i) => records[i].time));
  assert.deepEqual(times(await admin.json("usage", "--key", keyId, "--since", "7d")), times(both));
  assert.deepEqual(Object.keys(today.totals.keys).sort(), [keyId, "key_other"].sort());

  // The newest two, as `audit --limit` shows the newest changes.
  const limited = await admin.json("usage", "--limit", "2");
  assert.deepEqual(times(limited), [records[5].time, records[4].time]);
  assert.deepEqual(limited.totals.users, { alice: { day: 4, week: 34, month: 234 } });
  const keyLimited = await admin.json("usage", "--key", keyId, "--limit", "3");
  assert.deepEqual(times(keyLimited), [4, 2, 1].map((i) => records[i].time));
});

Deno.test("usage --limit keeps the newest records across the ledger's rows, with and without --key", async () => {
  using admin = await AdminHarness.open();
  await admin.json("server", "add", "--name", "gpu1", "--url", "http://gpu1:11434", "--model", "llama3");
  const { id: keyId } = await admin.json("key", "create", "--model", "llama3");
  const hour = (h: number) => `2026-11-22T${String(h).padStart(2, "0")}:00:00.000Z`;
  // Three rows of three records each (a flush writes what was queued as one row), the other key's between.
  const ledger = new UsageLedger(admin.kv);
  for (const first of [0, 3, 6]) {
    for (const h of [first, first + 1, first + 2]) {
      ledger.record(sample({ time: hour(h), keyId: h % 3 === 1 ? "key_other" : keyId, user: undefined }));
    }
    await ledger.flush();
  }
  await ledger.close();
  assert.equal(
    await Array.fromAsync(admin.kv.list({ prefix: [USAGE_PREFIX] })).then((rows) => rows.length),
    3,
  );
  const times = (out: { records: UsageRecord[] }) => out.records.map((r) => r.time);
  assert.deepEqual(times(await admin.json("usage", "--limit", "4")), [8, 7, 6, 5].map(hour));
  assert.deepEqual(times(await admin.json("usage", "--key", keyId, "--limit", "4")), [8, 6, 5, 3].map(hour));
  assert.deepEqual(times(await admin.json("usage")), [8, 7, 6, 5, 4, 3, 2, 1, 0].map(hour));
  assert.deepEqual(
    times(await admin.json("usage", "--key", keyId, "--since", hour(2), "--limit", "10")),
    [8, 6, 5, 3, 2].map(hour),
  );
});

Deno.test("usage refuses unknown names and bad flags with one line", async () => {
  using admin = await AdminHarness.open();
  await seed(admin);
  assert.equal(await admin.fails(1, "usage", "--key", "key_nope"), "admin: usage: No key with id key_nope");
  assert.equal(await admin.fails(1, "usage", "--user", "nobody"), 'admin: usage: No user named "nobody"');
  assert.match(
    await admin.fails(2, "usage", "--since", "yesterday"),
    /^admin: usage: --since must be a duration like 30m, 24h or 7d, or an ISO-8601 date or date-time .*got "yesterday"$/,
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
