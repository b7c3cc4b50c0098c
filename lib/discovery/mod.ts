/**
 * @module Model discovery and the rest of Ollama's surface, beside the faces: what a key's client may learn
 * (its one model, under the name its format uses) and the answers Ollama clients expect on Ollama's own
 * paths. It reads the same key, store snapshot and live server state the pipeline uses, spends no
 * rate-limit slot or tokens, and never calls a backend. Its paths are lib/server/discovery_routes.ts.
 */
export { listModels, retrieveModel } from "./openai_models.ts";
export { root, show, tags, version } from "./ollama_models.ts";
export { ps } from "./ollama_ps.ts";
export { notServed } from "./not_served.ts";
export { wrongBaseUrl } from "./wrong_base.ts";
export { countTokens } from "./count_tokens.ts";
