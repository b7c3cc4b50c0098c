/**
 * @module Turning `key create` / `key update` flags into a change to a key's policy. Both verbs read flags
 * the same way; update alone has the `--no-…` switches, since create starts with every capability off.
 */
import type { KeyPolicy, KeyPriority } from "../store/records.ts";
import type { FlagSpec } from "./command.ts";
import { type FlagReader, modelTag, NONE, recordName, UsageError } from "./flags.ts";
import { allowDomain, allowIp, allowList } from "./net_rules.ts";
import { expiryInstant } from "./time_flags.ts";
import type { Patch } from "./patch.ts";
import { QUOTA_FLAGS } from "./user_commands.ts";
import { SYSTEM_PROMPT_MODE_FLAG, systemPromptMode } from "./system_prompt_mode.ts";

const CAPABILITIES = {
  tools: "tools",
  vision: "vision",
  thinking: "thinking",
  "force-json": "forceJson",
} as const satisfies Record<string, keyof KeyPolicy>;

const NONE_CLEARS = "none clears";

export const KEY_CREATE_FLAGS = {
  model: {
    type: "string",
    value: "TAG",
    help: "the model the key may use, by a server's tag or alias (required on create)",
  },
  force: { type: "boolean", help: "accept a --model that no server (of the key's cluster) carries yet" },
  name: { type: "string", value: "LABEL", help: `a label for people; not unique (${NONE_CLEARS})` },
  cluster: {
    type: "string",
    value: "NAME",
    help: `only this cluster's servers serve the key (${NONE_CLEARS})`,
  },
  user: {
    type: "string",
    value: "NAME",
    help: `the user who owns the key and shares its quotas (${NONE_CLEARS})`,
  },
  expires: {
    type: "string",
    value: "WHEN",
    help: `when the key stops working: ISO-8601 (2026-12-31) or from now (30d, 12h); not in the past ` +
      `(${NONE_CLEARS})`,
  },
  rpm: { type: "string", value: "N", help: `requests per minute (${NONE_CLEARS})` },
  ...QUOTA_FLAGS,
  "allow-ip": {
    type: "string",
    multiple: true,
    value: "CIDR",
    help: "only clients from these addresses (none alone clears)",
  },
  "allow-domain": {
    type: "string",
    multiple: true,
    value: "DOMAIN",
    help: "only browser pages from example.com or *.example.com (none alone clears)",
  },
  tools: { type: "boolean", help: "allow tool (function) calls" },
  vision: { type: "boolean", help: "allow images in messages" },
  thinking: { type: "boolean", help: "let the model reason first (otherwise thinking is turned off)" },
  "force-json": { type: "boolean", help: "always ask the model for JSON output" },
  "system-prompt": {
    type: "string",
    value: "TEXT",
    help: `a system message put first in every conversation (${NONE_CLEARS})`,
  },
  ...SYSTEM_PROMPT_MODE_FLAG,
  "max-ctx": {
    type: "string",
    value: "N",
    help: `ceiling on the context window a request asks for (${NONE_CLEARS})`,
  },
  "max-predict": {
    type: "string",
    value: "N",
    help: `ceiling on tokens generated per request (${NONE_CLEARS})`,
  },
  "default-ctx": {
    type: "string",
    value: "N",
    help: `context window when a request names none (${NONE_CLEARS})`,
  },
  "default-predict": {
    type: "string",
    value: "N",
    help: `tokens to generate when a request names no limit (${NONE_CLEARS})`,
  },
  priority: {
    type: "string",
    value: "high|normal|low",
    help: "place in the wait queue when servers are busy",
  },
} satisfies Record<string, FlagSpec>;

export const KEY_UPDATE_FLAGS = {
  ...KEY_CREATE_FLAGS,
  "no-tools": { type: "boolean", help: "forbid tool calls" },
  "no-vision": { type: "boolean", help: "forbid images" },
  "no-thinking": { type: "boolean", help: "turn the model's reasoning off" },
  "no-force-json": { type: "boolean", help: "stop forcing JSON answers" },
} satisfies Record<string, FlagSpec>;

function expiry(flags: FlagReader, now: Date): string | null | undefined {
  const raw = flags.string("expires");
  if (raw === undefined) return undefined;
  return raw === NONE ? null : expiryInstant("expires", raw, now);
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

/** The change the flags make; `now` is what `--expires 30d` counts from and what it must lie after. */
export function keyPatch(flags: FlagReader, now: Date): Patch<KeyPolicy> {
  const model = flags.string("model");
  const patch: Patch<KeyPolicy> = {
    model: model === undefined ? undefined : modelTag("model", model),
    name: flags.optionalText("name"),
    cluster: reference(flags, "cluster"),
    user: reference(flags, "user"),
    expiresAt: expiry(flags, now),
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
