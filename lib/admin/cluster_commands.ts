/**
 * @module `admin cluster …`: named groups of servers that keys are pinned to. Members must exist when the
 * cluster is written (checked inside the same commit), and a cluster an active key uses cannot be removed.
 */
import type { ClusterRecord } from "../store/records.ts";
import type { CommandContext, CommandResult, Noun } from "./command.ts";
import { type FlagReader, NONE, recordName, UsageError } from "./flags.ts";
import { fields, table } from "./output.ts";
import { unchanged } from "./patch.ts";

const MEMBER_FLAG = {
  type: "string",
  multiple: true,
  value: "NAME",
  help: "a member server (none alone means no members)",
} as const;

function one(cluster: ClusterRecord, headline: string): CommandResult {
  const body = fields([
    ["name", cluster.name],
    ["servers", cluster.servers],
    ["createdAt", cluster.createdAt],
    ["updatedAt", cluster.updatedAt],
  ]);
  return { json: cluster, human: `${headline}\n${body}` };
}

/** Repeated names collapse; `--server none` alone means "no members", the only way to empty a cluster. */
function members(raws: string[]): string[] {
  if (raws.length === 1 && raws[0] === NONE) return [];
  return [...new Set(raws.map((raw) => recordName("server", raw)))];
}

async function add(ctx: CommandContext, flags: FlagReader): Promise<CommandResult> {
  const name = recordName("name", flags.required("name"));
  const servers = members(flags.list("server") ?? []);
  const cluster = await ctx.catalog.clusters.add(
    { name, servers },
    (op) => ctx.catalog.requireServers(op, servers),
    ctx.now(),
  );
  return one(cluster, `Added cluster ${JSON.stringify(name)}.`);
}

async function update(ctx: CommandContext, flags: FlagReader, name: string): Promise<CommandResult> {
  const given = flags.list("server");
  // An accidental bare `cluster update NAME` must not silently empty the cluster.
  if (given === undefined) {
    throw new UsageError(`nothing to change; give --server NAME… (or --server ${NONE} to empty the cluster)`);
  }
  const servers = members(given);
  const current = await ctx.catalog.clusters.get(name);
  if (unchanged(current, { ...current, servers })) {
    return one(current, `Nothing changed: cluster ${JSON.stringify(name)} already has these servers.`);
  }
  const cluster = await ctx.catalog.clusters.update(
    name,
    (c) => ({ ...c, servers }),
    (op) => ctx.catalog.requireServers(op, servers),
    ctx.now(),
  );
  return one(cluster, `Updated cluster ${JSON.stringify(name)}.`);
}

export const CLUSTER_VERBS: Noun = {
  add: {
    flags: {
      name: { type: "string", value: "NAME", help: "the cluster's name (required)" },
      server: MEMBER_FLAG,
    },
    help: "create a named group of servers that keys can be pinned to",
    run: add,
  },
  list: {
    flags: {},
    help: "list the clusters and their servers",
    async run(ctx) {
      const clusters = await ctx.catalog.clusters.list();
      return {
        json: clusters,
        human: table(["NAME", "SERVERS"], clusters.map((c) => [c.name, c.servers]), "No clusters."),
      };
    },
  },
  update: {
    flags: { server: MEMBER_FLAG },
    operand: "NAME",
    help: "replace a cluster's member list with the --server names given",
    run: update,
  },
  remove: {
    flags: {},
    operand: "NAME",
    help: "delete a cluster (refused while an active key uses it)",
    async run(ctx, _flags, name) {
      return one(await ctx.catalog.removeCluster(name), `Removed cluster ${JSON.stringify(name)}.`);
    },
  },
};
