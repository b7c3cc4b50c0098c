/**
 * @module The records the admin manages. Shared by the admin CLI (writes) and the gateway (reads).
 */

export type BackendKind = "ollama" | "openai";
export const BACKEND_KINDS: readonly BackendKind[] = ["ollama", "openai"];

export interface ServedModel {
  /** The backend's own name for the model. */
  tag: string;
  /** The name format-B clients see; the tag when absent. */
  alias?: string;
}

export interface ServerRecord {
  name: string;
  url: string;
  kind: BackendKind;
  models: ServedModel[];
  weight: number;
  enabled: boolean;
  maxCtx?: number;
  maxPredict?: number;
  /** Sent as a bearer token to OpenAI-compatible backends. */
  apiKey?: string;
  /** Requests the server runs at once (OLLAMA_NUM_PARALLEL, vLLM's batch); more wait at the gateway. */
  slots?: number;
  createdAt: string;
  updatedAt: string;
}

export interface ClusterRecord {
  name: string;
  servers: string[];
  createdAt: string;
  updatedAt: string;
}

export interface TokenQuotas {
  dailyTokens?: number;
  weeklyTokens?: number;
  monthlyTokens?: number;
}

/** What a key and its user each may hold at once: tokens per period, and requests in progress. */
export interface OwnerLimits extends TokenQuotas {
  /** Requests in progress at once, over every gateway process on the store; absent means no limit. */
  maxConcurrent?: number;
}

export interface UserRecord extends OwnerLimits {
  name: string;
  createdAt: string;
  updatedAt: string;
}

export interface KeyPolicy extends OwnerLimits {
  model: string;
  name?: string;
  cluster?: string;
  user?: string;
  /** ISO 8601; the key answers 403 from then on. */
  expiresAt?: string;
  rpm?: number;
  allowIps: string[];
  allowDomains: string[];
  tools: boolean;
  vision: boolean;
  thinking: boolean;
  forceJson: boolean;
  systemPrompt?: string;
  /** How `systemPrompt` meets the client's own system messages; absent means "prepend" (they follow it). */
  systemPromptMode?: SystemPromptMode;
  maxCtx?: number;
  maxPredict?: number;
  defaultCtx?: number;
  defaultPredict?: number;
  /** Place in the gateway's wait queue when every server is busy; absent means normal. */
  priority?: KeyPriority;
}

export type KeyPriority = "high" | "normal" | "low";

/** "replace": the key's system prompt is the only one; the client's system messages are removed. */
export type SystemPromptMode = "prepend" | "replace";
export const SYSTEM_PROMPT_MODES: readonly SystemPromptMode[] = ["prepend", "replace"];

export interface KeyRecord extends KeyPolicy {
  id: string;
  /** SHA-256 of the secret, hex. The secret itself is never stored. */
  digest: string;
  /** First characters of the secret, so an admin can tell keys apart. */
  hint: string;
  createdAt: string;
  updatedAt: string;
  revokedAt?: string;
  /** The secret a rotation replaced, still accepted until `validUntil` (ISO 8601). */
  previous?: PreviousSecret;
  rotatedAt?: string;
}

export interface PreviousSecret {
  digest: string;
  hint: string;
  validUntil: string;
}

/** A key's policy before any flag is applied: nothing allowed beyond plain chat with its model. */
export function basePolicy(model: string): KeyPolicy {
  return {
    model,
    allowIps: [],
    allowDomains: [],
    tools: false,
    vision: false,
    thinking: false,
    forceJson: false,
  };
}
