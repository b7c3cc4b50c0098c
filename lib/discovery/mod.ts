/**
 * @module Model discovery and the rest of Ollama's surface, beside the faces: what a key's client may learn
 * (its one model, under the name its format uses) and the answers Ollama clients expect on Ollama's own
 * paths. It reads the same key, store snapshot and live server state the pipeline uses, spends no
 * rate-limit slot or tokens, and never calls a backend. The routes under routes/ are one-liners onto these.
 */
import type { Handler, RouteModule } from "../http/route.ts";
import { listModels, retrieveModel } from "./openai_models.ts";
import { root, show, tags, version } from "./ollama_models.ts";
import { ps } from "./ollama_ps.ts";
import { notServed } from "./not_served.ts";
import { wrongBaseUrl } from "./wrong_base.ts";
import { countTokens } from "./count_tokens.ts";

/** HEAD answers as GET would, without the body. */
function withHead(get: Handler): Partial<Record<string, Handler>> {
  return {
    GET: get,
    HEAD: async (request, client) => {
      const response = await get(request, client);
      await response.body?.cancel();
      return new Response(null, { status: response.status, headers: response.headers });
    },
  };
}

export const openaiModelsRoute: RouteModule = {
  face: "openai",
  cors: true,
  handlers: (deps) => ({ GET: (request, client) => listModels(request, client, deps) }),
};

export const openaiModelRoute: RouteModule = {
  face: "openai",
  cors: true,
  handlers: (deps) => ({ GET: (request, client) => retrieveModel(request, client, deps) }),
};

export const anthropicCountTokensRoute: RouteModule = {
  face: "anthropic",
  cors: true,
  handlers: (deps) => ({ POST: (request, client) => countTokens(request, client, deps) }),
};

export const ollamaTagsRoute: RouteModule = {
  face: "ollama_api",
  cors: true,
  handlers: (deps) => withHead((request, client) => tags(request, client, deps)),
};

export const ollamaShowRoute: RouteModule = {
  face: "ollama_api",
  cors: true,
  handlers: (deps) => ({ POST: (request, client) => show(request, client, deps) }),
};

export const ollamaPsRoute: RouteModule = {
  face: "ollama_api",
  cors: true,
  handlers: (deps) => withHead((request, client) => ps(request, client, deps)),
};

export const ollamaVersionRoute: RouteModule = {
  face: "ollama_api",
  cors: true,
  handlers: () => withHead(version),
};

export const ollamaRootRoute: RouteModule = {
  face: "ollama_api",
  cors: true,
  handlers: () => withHead(root),
};

const ANY_METHOD = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH"];

/** An Ollama endpoint the gateway does not serve: every method gets the same explanation. */
export const ollamaNotServedRoute: RouteModule = {
  face: "ollama_api",
  cors: true,
  handlers: () => Object.fromEntries(ANY_METHOD.map((m) => [m, notServed])),
};

/** Ollama's paths under an OpenAI base URL (`/v1/api/...`): every method is told the base URL to use. */
export const ollamaWrongBaseRoute: RouteModule = {
  face: "ollama_api",
  cors: true,
  handlers: () => Object.fromEntries(ANY_METHOD.map((m) => [m, wrongBaseUrl])),
};
