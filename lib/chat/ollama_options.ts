/**
 * @module The names Ollama gives the generation options: format-B clients send them, the Ollama backend is
 * sent them. One table, read in both directions.
 */
import type { GenerationOptions } from "./types.ts";

export const OLLAMA_OPTION_NAMES = {
  temperature: "temperature",
  topP: "top_p",
  topK: "top_k",
  minP: "min_p",
  repeatPenalty: "repeat_penalty",
  presencePenalty: "presence_penalty",
  frequencyPenalty: "frequency_penalty",
  seed: "seed",
  stop: "stop",
  numCtx: "num_ctx",
  numPredict: "num_predict",
} as const satisfies Record<keyof GenerationOptions, string>;

/** The table as [ours, Ollama's] pairs, made once rather than by `Object.entries` on every request. */
export const OLLAMA_OPTION_PAIRS = Object.entries(OLLAMA_OPTION_NAMES) as [keyof GenerationOptions, string][];
