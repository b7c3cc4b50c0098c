/**
 * @module The client-side wire formats. Everything outside this folder speaks the internal chat form only.
 */
import type { Face, FaceName } from "./face.ts";
import { openaiFace } from "./openai.ts";
import { ollamaFace } from "./ollama.ts";
import { ollamaApiFace } from "./ollama_api.ts";
import { responsesFace } from "./responses.ts";
import { anthropicFace } from "./anthropic.ts";

export { parseCountTokens } from "./anthropic.ts";

export type { Face, FaceName, RenderContext, StreamContext, StreamRenderer } from "./face.ts";

export const FACES = {
  openai: openaiFace,
  ollama: ollamaFace,
  responses: responsesFace,
  anthropic: anthropicFace,
} satisfies Record<FaceName, Face>;

/** The error format of each public path: the faces, and Ollama's own paths' variant of format B. */
export const ROUTE_FACES = { ...FACES, ollama_api: ollamaApiFace } satisfies Record<string, Face>;
export type RouteFace = keyof typeof ROUTE_FACES;
