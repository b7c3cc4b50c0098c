/**
 * Ollama's endpoints other than chat and discovery: generation, embeddings, and model management (pull,
 * push, create, delete, copy, blobs). The gateway answers them itself, in Ollama's error shape and naming
 * what it does serve, so no such request can reach a backend through it. 404, as Ollama answers a path it
 * lacks: clients do not retry it (LangChain retries 5xx), and no client reads it as "model missing, pull it".
 */
import { GatewayError } from "../errors.ts";
import { ROUTE_FACES } from "../faces/mod.ts";
import { errorResponse } from "../http/respond.ts";

const SERVED = "This gateway serves chat and model discovery only: POST /api/chat, GET /api/tags, " +
  "POST /api/show, GET /api/ps and GET /api/version (Ollama); POST /v1/chat/completions, " +
  "POST /v1/responses and GET /v1/models (OpenAI); POST /v1/messages (Anthropic)";

const MANAGEMENT = /^\/api\/(pull|push|create|delete|copy|blobs)(\/|$)/;

export class NotServed extends GatewayError {
  constructor(path: string) {
    const shown = path.length > 100 ? `${path.slice(0, 100)}…` : path;
    super(
      404,
      "not_found",
      MANAGEMENT.test(path)
        ? `Model management (${shown}) is not available through this gateway. ${SERVED}`
        : `${shown} is not available through this gateway. ${SERVED}`,
    );
  }
}

export function notServed(request: Request): Response {
  return errorResponse(ROUTE_FACES.ollama_api, new NotServed(new URL(request.url).pathname));
}

/** Any other path under Ollama's `/api/` (not the `/api/v1/` mirrors) speaks Ollama's error shape too. */
export function notFoundResponse(path: string): Response | undefined {
  if (!path.startsWith("/api/") || path.startsWith("/api/v1/")) return undefined;
  return errorResponse(ROUTE_FACES.ollama_api, new NotServed(path));
}
