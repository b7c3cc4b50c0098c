/**
 * @module `admin key …`: the API keys clients present. The secret exists only in the output of `key create`;
 * afterwards the store holds its digest, which no command prints either (it would let anyone holding the
 * output forge a lookup into the authentication index).
 */
import { createKey, getKey, listKeys, revokeKey, rotateKey, updateKey } from "../store/keys.ts";
import { basePolicy, type KeyRecord } from "../store/records.ts";
import type { CommandContext, CommandResult, Noun } from "./command.ts";
import { type FlagReader, modelTag, UsageError } from "./flags.ts";
import { applyPatch, spreadable, unchanged } from "./patch.ts";
import { requireOfferedModel } from "./model_offer.ts";
import { fields, table } from "./output.ts";
import { checkDefaults, KEY_CREATE_FLAGS, KEY_UPDATE_FLAGS, keyPatch } from "./key_flags.ts";
import { durationMs } from "./duration.ts";

const DEFAULT_GRACE = "24h";

export type KeyStatus = "active" | "expired" | "revoked";

export function keyStatus(key: KeyRecord, now: Date): KeyStatus {
  if (key.revokedAt) return "revoked";
  return key.expiresAt !== undefined && Date.parse(key.expiresAt) <= now.getTime() ? "expired" : "active";
}

/** The key as printed and audited: no digest, and of a previous secret only its hint and end of grace. */
export function keyView(key: KeyRecord): Record<string, unknown> {
  const { digest: _digest, previous, ...shown } = key;
  if (!previous) return shown;
  return { ...shown, previousHint: previous.hint, previousValidUntil: previous.validUntil };
}

export function keyJson(key: KeyRecord, now: Date): Record<string, unknown> {
  return { ...keyView(key), status: keyStatus(key, now) };
}

function keyFields(key: KeyRecord, now: Date): string {
  return fields([
    ["id", key.id],
    ["name", key.name],
    ["hint", key.hint],
    ["status", keyStatus(key, now)],
    ["model", key.model],
    ["cluster", key.cluster],
    ["user", key.user],
    ["expiresAt", key.expiresAt],
    ["rpm", key.rpm],
    ["dailyTokens", key.dailyTokens],
    ["weeklyTokens", key.weeklyTokens],
    ["monthlyTokens", key.monthlyTokens],
    ["maxConcurrent", key.maxConcurrent],
    ["allowIps", key.allowIps],
    ["allowDomains", key.allowDomains],
    ["tools", key.tools],
    ["vision", key.vision],
    ["thinking", key.thinking],
    ["forceJson", key.forceJson],
    ["systemPrompt", key.systemPrompt],
    ["maxCtx", key.maxCtx],
    ["maxPredict", key.maxPredict],
    ["defaultCtx", key.defaultCtx],
    ["defaultPredict", key.defaultPredict],
    ["priority", key.priority ?? "normal"],
    ["createdAt", key.createdAt],
    ["updatedAt", key.updatedAt],
    ["revokedAt", key.revokedAt],
    ["rotatedAt", key.rotatedAt],
    ["previousHint", key.previous?.hint],
    ["previousValidUntil", key.previous?.validUntil],
  ]);
}

function one(key: KeyRecord, now: Date, headline?: string): CommandResult {
  const body = keyFields(key, now);
  return { json: keyJson(key, now), human: headline ? `${headline}\n${body}` : body };
}

async function create(ctx: CommandContext, flags: FlagReader): Promise<CommandResult> {
  const now = ctx.now();
  const policy = applyPatch(basePolicy(modelTag("model", flags.required("model"))), keyPatch(flags, now));
  checkDefaults(policy);
  await ctx.catalog.requireKeyRefs(policy);
  if (!flags.bool("force")) await requireOfferedModel(ctx.catalog, policy);
  const { record, secret } = await createKey(ctx.kv, policy, now);
  const human = [
    `Created key ${record.id}.`,
    "",
    `    ${secret}`,
    "",
    "Copy this key now: it is not stored and will not be shown again.",
    "",
    keyFields(record, now),
  ].join("\n");
  return { json: { id: record.id, key: secret, ...keyJson(record, now) }, human };
}

async function rotate(ctx: CommandContext, flags: FlagReader, id: string): Promise<CommandResult> {
  const graceMs = durationMs("grace", flags.string("grace") ?? DEFAULT_GRACE);
  const now = ctx.now();
  const { record, secret } = await rotateKey(ctx.kv, id, graceMs, now);
  const until = record.previous?.validUntil ?? now.toISOString();
  const human = [
    `Rotated key ${id}.`,
    "",
    `    ${secret}`,
    "",
    "Copy this key now: it is not stored and will not be shown again.",
    graceMs > 0
      ? `The previous secret keeps working until ${until}.`
      : "The previous secret no longer works.",
  ].join("\n");
  return { json: { id, key: secret, previousValidUntil: until }, human };
}

async function update(ctx: CommandContext, flags: FlagReader, id: string): Promise<CommandResult> {
  if (!flags.anyGiven("force")) throw new UsageError("nothing to change; give at least one flag");
  const now = ctx.now();
  const patch = keyPatch(flags, now);
  const current = await getKey(ctx.kv, id);
  const next = applyPatch(current, patch);
  checkDefaults(next);
  // A revoked key is refused by the store however little the update asks.
  if (!current.revokedAt && unchanged(current, next)) {
    return one(current, now, `Nothing changed: key ${id} already has these settings.`);
  }
  await ctx.catalog.requireKeyRefs({ cluster: patch.cluster ?? undefined, user: patch.user ?? undefined });
  const routed = patch.model !== undefined || patch.cluster !== undefined;
  if (routed && !flags.bool("force")) await requireOfferedModel(ctx.catalog, next);
  return one(await updateKey(ctx.kv, id, spreadable(patch), now), now, `Updated key ${id}.`);
}

async function list(ctx: CommandContext): Promise<CommandResult> {
  const now = ctx.now();
  const keys = (await listKeys(ctx.kv)).sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  const rows = keys.map((k) => [k.id, k.name, k.model, k.cluster, k.user, keyStatus(k, now), k.expiresAt]);
  return {
    json: keys.map((k) => keyJson(k, now)),
    human: table(["ID", "NAME", "MODEL", "CLUSTER", "USER", "STATUS", "EXPIRES"], rows, "No keys."),
  };
}

export const KEY_VERBS: Noun = {
  create: {
    flags: KEY_CREATE_FLAGS,
    help: "issue an API key for one model; its secret is printed once",
    run: create,
  },
  list: { flags: {}, help: "list the keys with their status", run: list },
  show: {
    flags: {},
    operand: "ID",
    help: "show one key's settings (never its secret)",
    async run(ctx, _flags, id) {
      return one(await getKey(ctx.kv, id), ctx.now());
    },
  },
  update: {
    flags: KEY_UPDATE_FLAGS,
    operand: "ID",
    help: "change the given settings of a key; lists given replace the old ones",
    run: update,
  },
  revoke: {
    flags: {},
    operand: "ID",
    help: "end every secret of the key at once",
    async run(ctx, _flags, id) {
      const now = ctx.now();
      return one(await revokeKey(ctx.kv, id, now), now, `Revoked key ${id}.`);
    },
  },
  rotate: {
    flags: {
      grace: {
        type: "string",
        value: "DURATION",
        help:
          `how long the previous secret keeps working: 90s, 30m, 24h, 7d (at most 30d; default ${DEFAULT_GRACE})`,
      },
    },
    operand: "ID",
    help: "give the key a new secret, printed once; same id, settings and history",
    run: rotate,
  },
};
