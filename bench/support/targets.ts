/**
 * The four things the bench drives with the same load: the backend called directly, the bare proxy in front
 * of it, and the gateway in front of it with a real key, asked once in format A (OpenAI chat completions) and
 * once in format B (Ollama's own `/api/chat`). Same question to each: a one-line chat, answered whole or
 * streamed.
 */
import type { LoadSpec } from "./load.ts";
import type { StreamTarget } from "./streaming.ts";

/** `gateway` is format A; `gatewayB` is the same gateway process asked in format B. */
export type TargetName = "direct" | "bare" | "gateway" | "gatewayB";
export const TARGET_NAMES: readonly TargetName[] = ["direct", "bare", "gateway", "gatewayB"];

export interface Target {
  name: TargetName;
  /** A non-streamed chat, for the load generator (connections and duration filled in per run). */
  whole: Omit<LoadSpec, "connections" | "seconds">;
  /** Streamed chats of a chosen length. */
  streamed: StreamTarget;
  /** A short streamed chat, for the load generator (the soak). */
  streamedLoad: Omit<LoadSpec, "connections" | "seconds">;
}

/** Chunks in each answer of the soak: a short chat answer, so that streams start and end at a high rate. */
const SOAK_CHUNKS = 8;

const messages = [{ role: "user", content: "hi" }];
const JSON_TYPE = { "Content-Type": "application/json" };

/**
 * Ollama's own wire format, as the backend and the bare proxy take it, and as the gateway takes it in format B
 * (where the key, in `headers`, decides the model, so `model` is any name).
 */
export function ollamaTarget(
  name: TargetName,
  baseUrl: string,
  { model = "m1", headers = {} as Record<string, string> } = {},
): Target {
  const url = `${baseUrl}/api/chat`;
  return {
    name,
    whole: {
      url,
      headers: { ...JSON_TYPE, ...headers },
      body: JSON.stringify({ model, messages, stream: false }),
    },
    streamedLoad: {
      url,
      headers: { ...JSON_TYPE, ...headers },
      body: JSON.stringify({ model, messages, stream: true, options: { num_predict: SOAK_CHUNKS } }),
    },
    streamed: {
      url,
      headers,
      marker: "\n",
      body: (chunks) => JSON.stringify({ model, messages, stream: true, options: { num_predict: chunks } }),
    },
  };
}

export function gatewayTarget(baseUrl: string, secret: string): Target {
  const url = `${baseUrl}/v1/chat/completions`;
  const auth = { Authorization: `Bearer ${secret}` };
  return {
    name: "gateway",
    whole: { url, headers: { ...JSON_TYPE, ...auth }, body: JSON.stringify({ model: "any", messages }) },
    streamedLoad: {
      url,
      headers: { ...JSON_TYPE, ...auth },
      body: JSON.stringify({ model: "any", messages, stream: true, max_tokens: SOAK_CHUNKS }),
    },
    streamed: {
      url,
      headers: auth,
      marker: "data: ",
      // The gateway sends the client's max_tokens on as num_predict: the key and server set no ceiling.
      body: (chunks) => JSON.stringify({ model: "any", messages, stream: true, max_tokens: chunks }),
    },
  };
}

export function benchTargets(urls: { backend: string; bare: string; gateway: string }, secret: string) {
  return {
    direct: ollamaTarget("direct", urls.backend),
    bare: ollamaTarget("bare", urls.bare),
    gateway: gatewayTarget(urls.gateway, secret),
    gatewayB: ollamaTarget("gatewayB", urls.gateway, {
      model: "any",
      headers: { Authorization: `Bearer ${secret}` },
    }),
  } satisfies Record<TargetName, Target>;
}
