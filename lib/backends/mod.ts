/**
 * @module Backend adapters, one per server kind. Nothing outside this folder knows a backend's wire format.
 */
import type { BackendKind } from "../store/records.ts";
import type { BackendAdapter } from "./adapter.ts";
import { ollamaBackend } from "./ollama.ts";
import { openaiBackend } from "./openai_compatible.ts";

export type { BackendAdapter, CallContext } from "./adapter.ts";

export const BACKENDS = { ollama: ollamaBackend, openai: openaiBackend } satisfies Record<
  BackendKind,
  BackendAdapter
>;
