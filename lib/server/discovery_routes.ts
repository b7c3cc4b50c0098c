/**
 * @module The paths of model discovery and of the rest of Ollama's surface (lib/discovery/): which methods
 * each answers, in which face, all open to web pages (CORS). The routes under routes/ are one-liners onto
 * these.
 */
import type { RouteHandler, RouteModule } from "./route.ts";
import {
  countTokens,
  listModels,
  notServed,
  ps,
  retrieveModel,
  root,
  show,
  tags,
  version,
  wrongBaseUrl,
} from "../discovery/mod.ts";

/** HEAD answers as GET would, without the body. */
function withHead(get: RouteHandler): Partial<Record<string, RouteHandler>> {
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
