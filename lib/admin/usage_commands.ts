/**
 * @module `admin usage`: the ledger's records, newest first (as `admin audit` lists changes), and the token
 * totals of the current UTC day, ISO week and month. A command without verbs, since it only reads. Totals come from the counters the quotas are
 * enforced with, not from adding up the listed records, so they show what the policy sees.
 */
import { getKey } from "../store/keys.ts";
import { listUsage, readTotals, type Totals, type TotalsScope } from "../usage/ledger.ts";
import { periodEnds, periodKeys } from "../usage/periods.ts";
import type { UsageRecord } from "../usage/types.ts";
import type { CommandContext, CommandResult, Verb } from "./command.ts";
import type { FlagReader } from "./flags.ts";
import { sinceInstant } from "./time_flags.ts";
import { table } from "./output.ts";

type TotalsTable = Record<string, Totals>;

async function totalsFor(ctx: CommandContext, scope: TotalsScope, ids: Iterable<string>, now: Date) {
  const out: TotalsTable = {};
  for (const id of [...new Set(ids)].sort()) out[id] = await readTotals(ctx.kv, scope, id, now);
  return out;
}

function recordsTable(records: UsageRecord[]): string {
  // REQS: a row of folded refusals stands for several requests (lib/usage/refusal_fold.ts).
  const headers = [
    "TIME",
    "KEY",
    "USER",
    "MODEL",
    "SERVER",
    "FORMAT",
    "STREAM",
    "STATUS",
    "HTTP",
    "CODE",
    "REQS",
  ];
  headers.push("PROMPT", "COMPLETION", "LATENCY MS", "TTFB MS");
  const rows = records.map((r) => [
    r.time,
    r.keyId,
    r.user,
    r.model,
    r.server,
    r.format,
    r.stream,
    r.status,
    r.httpStatus,
    r.errorCode,
    r.count ?? 1,
    r.promptTokens,
    r.completionTokens,
    r.latencyMs,
    r.ttfbMs,
  ]);
  return table(headers, rows, "No usage records.");
}

function totalsTable(keys: TotalsTable, users: TotalsTable): string {
  const rows = [
    ...Object.entries(keys).map(([id, t]) => ["key", id, t.day, t.week, t.month]),
    ...Object.entries(users).map(([id, t]) => ["user", id, t.day, t.week, t.month]),
  ];
  return table(["SCOPE", "ID", "DAY", "WEEK", "MONTH"], rows, "No token totals.");
}

async function usage(ctx: CommandContext, flags: FlagReader): Promise<CommandResult> {
  const keyId = flags.string("key");
  const user = flags.string("user");
  const sinceRaw = flags.string("since");
  const now = ctx.now();
  const since = sinceRaw === undefined ? undefined : sinceInstant("since", sinceRaw, now);
  const limit = flags.count("limit");
  // Unknown names are refused rather than answered with an empty, plausible-looking report.
  if (keyId !== undefined) await getKey(ctx.kv, keyId);
  if (user !== undefined) await ctx.catalog.users.get(user);

  const records = await listUsage(ctx.kv, { keyId, user, since, limit, newestFirst: true });
  const given = keyId !== undefined || user !== undefined;
  const keyIds = given ? [keyId] : records.map((r) => r.keyId);
  const users = given ? [user] : records.map((r) => r.user);
  const totals = {
    keys: await totalsFor(ctx, "key", keyIds.filter((id) => id !== undefined), now),
    users: await totalsFor(ctx, "user", users.filter((id) => id !== undefined), now),
  };
  const labels = periodKeys(now);
  // Shown without the counter-key prefixes ("d:", "w:", "m:"): these are for people and scripts to read.
  const periods = {
    day: labels.day.slice(2),
    week: labels.week.slice(2),
    month: labels.month.slice(2),
  };
  const ends = periodEnds(now);
  const heading = `Token totals for day ${periods.day} (until ${ends.day}), week ${periods.week} ` +
    `(until ${ends.week}), month ${periods.month} (until ${ends.month}):`;
  return {
    json: { records, totals, periods },
    human: [recordsTable(records), "", heading, totalsTable(totals.keys, totals.users)].join("\n"),
  };
}

export const USAGE_COMMAND: Verb = {
  flags: {
    key: { type: "string", value: "ID", help: "only this key's records and totals" },
    user: { type: "string", value: "NAME", help: "only this user's records and totals" },
    since: {
      type: "string",
      value: "WHEN",
      help: "only records from then on: ISO-8601 (2026-11-01) or a time ago (24h, 7d)",
    },
    limit: { type: "string", value: "N", help: "at most the newest N records (default 1000)" },
  },
  help: "usage records, newest first, and the token totals of the current day, week and month",
  run: usage,
};
