/**
 * @module `admin user …`: the owners of keys, carrying token quotas and a concurrency limit shared by all their
 * keys. A user who still owns an active key cannot be removed.
 */
import type { UserRecord } from "../store/records.ts";
import type { CommandContext, CommandResult, FlagSpec, Noun } from "./command.ts";
import { type FlagReader, recordName, UsageError } from "./flags.ts";
import { applyPatch, type Patch, unchanged } from "./patch.ts";
import { fields, table } from "./output.ts";

/** The limits keys and users both have: token quotas, and requests in progress at once. */
export const QUOTA_FLAGS = {
  "daily-tokens": { type: "string", value: "N", help: "tokens allowed per UTC day (none clears)" },
  "weekly-tokens": { type: "string", value: "N", help: "tokens allowed per ISO week (none clears)" },
  "monthly-tokens": { type: "string", value: "N", help: "tokens allowed per calendar month (none clears)" },
  "max-concurrent": { type: "string", value: "N", help: "requests in flight at once (none clears)" },
} satisfies Record<string, FlagSpec>;

export function quotaPatch(flags: FlagReader): Patch<UserRecord> {
  return {
    dailyTokens: flags.optionalCount("daily-tokens"),
    weeklyTokens: flags.optionalCount("weekly-tokens"),
    monthlyTokens: flags.optionalCount("monthly-tokens"),
    maxConcurrent: flags.optionalCount("max-concurrent"),
  };
}

function one(user: UserRecord, headline: string): CommandResult {
  const body = fields([
    ["name", user.name],
    ["dailyTokens", user.dailyTokens],
    ["weeklyTokens", user.weeklyTokens],
    ["monthlyTokens", user.monthlyTokens],
    ["maxConcurrent", user.maxConcurrent],
    ["createdAt", user.createdAt],
    ["updatedAt", user.updatedAt],
  ]);
  return { json: user, human: `${headline}\n${body}` };
}

function userRow(u: UserRecord) {
  return [u.name, u.dailyTokens, u.weeklyTokens, u.monthlyTokens, u.maxConcurrent];
}

async function add(ctx: CommandContext, flags: FlagReader): Promise<CommandResult> {
  const name = recordName("name", flags.required("name"));
  const fresh: Omit<UserRecord, "createdAt" | "updatedAt"> = { name };
  const user = await ctx.catalog.users.add(applyPatch(fresh, quotaPatch(flags)), undefined, ctx.now());
  return one(user, `Added user ${JSON.stringify(name)}.`);
}

async function update(ctx: CommandContext, flags: FlagReader, name: string): Promise<CommandResult> {
  if (!flags.anyGiven()) throw new UsageError("nothing to change; give at least one flag");
  const patch = quotaPatch(flags);
  const current = await ctx.catalog.users.get(name);
  if (unchanged(current, applyPatch(current, patch))) {
    return one(current, `Nothing changed: user ${JSON.stringify(name)} already has these settings.`);
  }
  const user = await ctx.catalog.users.update(name, (u) => applyPatch(u, patch), undefined, ctx.now());
  return one(user, `Updated user ${JSON.stringify(name)}.`);
}

export const USER_VERBS: Noun = {
  add: {
    flags: { name: { type: "string", value: "NAME", help: "the user's name (required)" }, ...QUOTA_FLAGS },
    help: "add an owner of keys, whose quotas all its keys share",
    run: add,
  },
  list: {
    flags: {},
    help: "list the users and their quotas",
    async run(ctx) {
      const users = await ctx.catalog.users.list();
      const head = ["NAME", "DAILY TOKENS", "WEEKLY TOKENS", "MONTHLY TOKENS", "MAX CONCURRENT"];
      return { json: users, human: table(head, users.map(userRow), "No users.") };
    },
  },
  update: { flags: QUOTA_FLAGS, operand: "NAME", help: "change the given quotas of a user", run: update },
  remove: {
    flags: {},
    operand: "NAME",
    help: "delete a user (refused while the user owns an active key)",
    async run(ctx, _flags, name) {
      return one(await ctx.catalog.removeUser(name), `Removed user ${JSON.stringify(name)}.`);
    },
  },
};
