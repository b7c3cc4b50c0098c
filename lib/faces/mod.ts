/**
 * @module The client-side wire formats. Everything outside this folder speaks the internal chat form only.
 */
import type { Face, FaceName } from "./face.ts";
import { openaiFace } from "./openai.ts";
import { ollamaFace } from "./ollama.ts";

export type { Face, FaceName, RenderContext, StreamContext, StreamRenderer } from "./face.ts";

export const FACES = { openai: openaiFace, ollama: ollamaFace } satisfies Record<FaceName, Face>;
