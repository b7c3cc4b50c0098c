/**
 * @module Turning `key create` / `key update` flags into a change to a key's policy. Both verbs read flags
 * the same way; update alone has the `--no-…` switches, since create starts with every capability off.
 */
import type { KeyPolicy, KeyPriority } from "../store/records.ts";
import type { FlagSpec } from "./command.ts";
import { type FlagReader, modelTag, NONE, recordName, UsageError } from "./flags.ts";
import { allowDomain, allowIp, allowList } from "./net_rules.ts";
import { isoInstant } from "./iso_time.ts";
import type { Patch } from "./patch.ts";
import { QUOTA_FLAGS } from "./user_commands.ts";
import { SYSTEM_PROMPT_MODE_FLAG, systemPromptMode } from "./system_prompt_mode.ts";

const CAPABILITIES = {
  tools: "tools",
  vision: "vision",
  thinking: "thinking",
  "force-json": "forceJson",
} as const satisfies Record<string, keyof KeyPolicy>;

export const KEY_CREATE_FLAGS = {
  model: { type: "string" },
  name: { type: "string" },
  cluster: { type: "string" },
  user: { type: "string" },
  expires: { type: "string" },
  rpm: { type: "string" },
  ...QUOTA_FLAGS,
  "allow-ip": { type: "string", multiple: true },
  "allow-domain": { type: "string", multiple: true },
  tools: { type: "boolean" },
  vision: { type: "boolean" },
  thinking: { type: "boolean" },
  "force-json": { type: "boolean" },
  "system-prompt": { type: "string" },
  ...SYSTEM_PROMPT_MODE_FLAG,
  "max-ctx": { type: "string" },
  "max-predict": { type: "string" },
  "default-ctx": { type: "string" },
  "default-predict": { type: "string" },
  priority: { type: "string" },
} satisfies Record<string, FlagSpec>;

export const KEY_UPDATE_FLAGS = {
  ...KEY_CREATE_FLAGS,
  "no-tools": { type: "boolean" },
  "no-vision": { type: "boolean" },
  "no-thinking": { type: "boolean" },
  "no-force-json": { type: "boolean" },
} satisfies Record<string, FlagSpec>;

function expiry(flags: FlagReader): string | null | undefined {
  const raw = flags.string("expires");
  if (raw === undefined) return undefined;
  return raw === NONE ? null : isoInstant("expires", raw);
}

function reference(flags: FlagReader, flag: string): string | null | undefined {
  const raw = flags.string(flag);
  if (raw === undefined) return undefined;
  return raw === NONE ? null : recordName(flag, raw);
}

/** A given list replaces the old one; `none` alone empties it. */
function allowed(flags: FlagReader, flag: string, parse: (raw: string) => string): string[] | undefined {
  const raws = flags.list(flag);
  if (raws === undefined) return undefined;
  if (raws.length === 1 && raws[0] === NONE) return [];
  return allowList(raws, parse);
}

const PRIORITIES: readonly KeyPriority[] = ["high", "normal", "low"];

/** Normal is what a key without a priority gets, so setting it clears the field. */
function priority(flags: FlagReader): KeyPriority | null | undefined {
  const raw = flags.string("priority");
  if (raw === undefined) return undefined;
  const found = PRIORITIES.find((p) => p === raw);
  if (!found) throw new UsageError(`--priority must be one of high, normal, low, got ${JSON.stringify(raw)}`);
  return found === "normal" ? null : found;
}

export function keyPatch(flags: FlagReader): Patch<KeyPolicy> {
  const model = flags.string("model");
  const patch: Patch<KeyPolicy> = {
    model: model === undefined ? undefined : modelTag("model", model),
    name: flags.optionalText("name"),
    cluster: reference(flags, "cluster"),
    user: reference(flags, "user"),
    expiresAt: expiry(flags),
    rpm: flags.optionalCount("rpm"),
    dailyTokens: flags.optionalCount("daily-tokens"),
    weeklyTokens: flags.optionalCount("weekly-tokens"),
    monthlyTokens: flags.optionalCount("monthly-tokens"),
    maxConcurrent: flags.optionalCount("max-concurrent"),
    allowIps: allowed(flags, "allow-ip", allowIp),
    allowDomains: allowed(flags, "allow-domain", allowDomain),
    systemPrompt: flags.optionalText("system-prompt"),
    systemPromptMode: systemPromptMode(flags),
    maxCtx: flags.optionalCount("max-ctx"),
    maxPredict: flags.optionalCount("max-predict"),
    defaultCtx: flags.optionalCount("default-ctx"),
    defaultPredict: flags.optionalCount("default-predict"),
    priority: priority(flags),
  };
  for (const [flag, field] of Object.entries(CAPABILITIES)) patch[field] = flags.toggle(flag, `no-${flag}`);
  return patch;
}

/** A default above its ceiling would be clamped on every request; saying so now is kinder. */
export function checkDefaults(policy: KeyPolicy): void {
  const check = (flag: string, value?: number, ceiling?: number) => {
    if (value !== undefined && ceiling !== undefined && value > ceiling) {
      throw new UsageError(`--default-${flag} (${value}) must not exceed --max-${flag} (${ceiling})`);
    }
  };
  check("ctx", policy.defaultCtx, policy.maxCtx);
  check("predict", policy.defaultPredict, policy.maxPredict);
}
