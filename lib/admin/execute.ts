/**
 * @module The one way an admin command runs, whoever asked: the CLI parses a command line into flags, the
 * admin page parses a form into the same flags, and both come here, so a change is validated by the same
 * code, refused with the same message and recorded in the audit trail the same way.
 */
import type { Actor } from "../audit/mod.ts";
import { auditingStore, type Describe } from "../audit/capture.ts";
import { Catalog } from "../store/catalog.ts";
import { KV_KEYS } from "../store/kv.ts";
import type { KeyRecord, ServerRecord } from "../store/records.ts";
import type { CommandContext, CommandResult, Noun, Verb } from "./command.ts";
import type { FlagReader } from "./flags.ts";
import { SERVER_VERBS, serverJson } from "./server_commands.ts";
import { CLUSTER_VERBS } from "./cluster_commands.ts";
import { USER_VERBS } from "./user_commands.ts";
import { KEY_VERBS, keyView } from "./key_commands.ts";

export const NOUNS: Record<string, Noun> = {
  server: SERVER_VERBS,
  cluster: CLUSTER_VERBS,
  user: USER_VERBS,
  key: KEY_VERBS,
};

/** What each noun is, for `--help`. */
export const NOUN_HELP: Record<string, string> = {
  server: "backends and the models they carry",
  cluster: "named groups of servers that keys can be pinned to",
  user: "owners of keys, with token quotas shared by all their keys",
  key: "the API keys clients present, and each key's policy",
};

export function commandContext(kv: Deno.Kv, now: () => Date): CommandContext {
  return { kv, catalog: new Catalog(kv), now };
}

/**
 * The records the trail follows, as the CLI prints them: no digest, no server API key; the API key is handed
 * over as a secret, so replacing it is recorded as a change without its value.
 */
const describe: Describe = (key, value) => {
  const [prefix, name, ...rest] = key;
  if (rest.length || typeof name !== "string" || value === null || typeof value !== "object") {
    return undefined;
  }
  if (prefix === KV_KEYS.keys) return { target: name, view: keyView(value as KeyRecord) };
  if (prefix === KV_KEYS.servers) {
    const server = value as ServerRecord;
    return { target: name, view: serverJson(server), secrets: { apiKey: server.apiKey } };
  }
  if (prefix === KV_KEYS.clusters || prefix === KV_KEYS.users) {
    return { target: name, view: { ...value as Record<string, unknown> } };
  }
  return undefined;
};

/** Runs `verb`; the write it makes, if any, carries its audit entry (`action` by `actor`) in the same commit. */
export function execute(
  ctx: CommandContext,
  call: { action: string; verb: Verb; flags: FlagReader; operand: string; actor: Actor },
): Promise<CommandResult> {
  const kv = auditingStore(ctx.kv, describe, { time: ctx.now, actor: call.actor, action: call.action });
  return call.verb.run(commandContext(kv, ctx.now), call.flags, call.operand);
}
