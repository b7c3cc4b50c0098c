/**
 * @module `admin server …`: backends and the models they carry. A server's API key is a credential for the
 * backend, so no output ever contains it; outputs say only whether one is set.
 */
import type { ServedModel, ServerRecord } from "../store/records.ts";
import type { CommandContext, CommandResult, Noun, Verb } from "./command.ts";
import { type FlagReader, recordName, UsageError } from "./flags.ts";
import { applyPatch, unchanged } from "./patch.ts";
import { fields, table } from "./output.ts";
import { servedModels, SERVER_FLAGS, serverPatch, serverUrl } from "./server_flags.ts";

type NewServer = Omit<ServerRecord, "createdAt" | "updatedAt">;

export function serverJson(server: ServerRecord): Record<string, unknown> {
  const { apiKey, ...rest } = server;
  return { ...rest, hasApiKey: apiKey !== undefined };
}

function modelText(model: ServedModel): string {
  return model.alias ? `${model.tag}=${model.alias}` : model.tag;
}

function serverFields(server: ServerRecord): string {
  return fields([
    ["name", server.name],
    ["url", server.url],
    ["kind", server.kind],
    ["models", server.models.map(modelText)],
    ["weight", server.weight],
    ["enabled", server.enabled],
    ["maxCtx", server.maxCtx],
    ["maxPredict", server.maxPredict],
    ["slots", server.slots],
    ["apiKey", server.apiKey === undefined ? "not set" : "set"],
    ["createdAt", server.createdAt],
    ["updatedAt", server.updatedAt],
  ]);
}

function one(server: ServerRecord, headline?: string): CommandResult {
  const body = serverFields(server);
  return { json: serverJson(server), human: headline ? `${headline}\n${body}` : body };
}

const setEnabled = (enabled: boolean): Verb => ({
  flags: {},
  operand: "NAME",
  help: enabled
    ? "let the server take requests again"
    : "take the server out of routing (it stays configured)",
  async run(ctx, _flags, name) {
    const state = enabled ? "enabled" : "disabled";
    const current = await ctx.catalog.servers.get(name);
    if (current.enabled === enabled) {
      return one(current, `Nothing changed: server ${JSON.stringify(name)} is already ${state}.`);
    }
    const server = await ctx.catalog.servers.update(name, (s) => ({ ...s, enabled }), undefined, ctx.now());
    return one(server, `Server ${JSON.stringify(name)} ${state}.`);
  },
});

async function add(ctx: CommandContext, flags: FlagReader): Promise<CommandResult> {
  const name = recordName("name", flags.required("name"));
  const url = serverUrl(flags.required("url"));
  const models = servedModels(flags.list("model") ?? []);
  const fresh: NewServer = { name, url, models, kind: "ollama", weight: 1, enabled: true };
  const server = await ctx.catalog.servers.add(applyPatch(fresh, serverPatch(flags)), undefined, ctx.now());
  return one(server, `Added server ${JSON.stringify(name)}.`);
}

async function update(ctx: CommandContext, flags: FlagReader, name: string): Promise<CommandResult> {
  if (!flags.anyGiven()) throw new UsageError("nothing to change; give at least one flag");
  const patch = serverPatch(flags);
  const current = await ctx.catalog.servers.get(name);
  if (unchanged(current, applyPatch(current, patch))) {
    return one(current, `Nothing changed: server ${JSON.stringify(name)} already has these settings.`);
  }
  const server = await ctx.catalog.servers.update(name, (s) => applyPatch(s, patch), undefined, ctx.now());
  return one(server, `Updated server ${JSON.stringify(name)}.`);
}

export const SERVER_VERBS: Noun = {
  add: {
    flags: { name: { type: "string", value: "NAME", help: "the server's name (required)" }, ...SERVER_FLAGS },
    help: "register a backend and the models it carries (--name, --url and --model are required)",
    run: add,
  },
  list: {
    flags: {},
    help: "list the servers",
    async run(ctx) {
      const servers = await ctx.catalog.servers.list();
      const rows = servers.map((s) => [
        s.name,
        s.kind,
        s.url,
        s.models.map(modelText),
        s.weight,
        s.enabled ? "enabled" : "disabled",
      ]);
      return {
        json: servers.map(serverJson),
        human: table(["NAME", "KIND", "URL", "MODELS", "WEIGHT", "STATUS"], rows, "No servers."),
      };
    },
  },
  show: {
    flags: {},
    operand: "NAME",
    help: "show one server's settings (its API key only as set or not set)",
    async run(ctx, _flags, name) {
      return one(await ctx.catalog.servers.get(name));
    },
  },
  update: {
    flags: { ...SERVER_FLAGS, enabled: { type: "boolean", help: "put the server back into routing" } },
    operand: "NAME",
    help: "change the given settings of a server; --model replaces its whole model list",
    run: update,
  },
  enable: setEnabled(true),
  disable: setEnabled(false),
  remove: {
    flags: {},
    operand: "NAME",
    help: "delete a server (refused while a cluster names it)",
    async run(ctx, _flags, name) {
      return one(await ctx.catalog.removeServer(name), `Removed server ${JSON.stringify(name)}.`);
    },
  },
};
