/**
 * @module An Ollama client given the gateway's OpenAI base URL (`http://gw:8000/v1`) asks for `/v1/api/chat`,
 * `/v1/api/tags` and the like, and would read a bare 404 as "model not found" or "no Ollama here". Every such
 * path, any method, answers Ollama's error shape naming the address to use instead: Ollama clients take the
 * gateway's root, without `/v1`. The address is the one the request came to (its Host), since that is the one
 * the client can reach. 404, as for any path Ollama lacks; nothing reaches a backend, and no key is needed.
 */
import { GatewayError } from "../errors.ts";
import { ROUTE_FACES } from "../faces/mod.ts";
import { errorResponse } from "../http/respond.ts";

/** The OpenAI base URLs the gateway serves, as they show up in front of an Ollama path. */
const OPENAI_BASE = /^(\/api)?\/v1(?=\/api\/)/;
const SHOWN_CHARS = 200;

export class WrongBaseUrl extends GatewayError {
  constructor(origin: string, openaiBase: string) {
    const root = origin.slice(0, SHOWN_CHARS);
    super(
      404,
      "not_found",
      `${root}${openaiBase} is the gateway's OpenAI base URL; an Ollama client takes the gateway's address ` +
        `without ${openaiBase}: set its host to ${root} (OpenAI clients keep ${root}${openaiBase}).`,
    );
  }
}

export function wrongBaseUrl(request: Request): Response {
  const url = new URL(request.url);
  const base = OPENAI_BASE.exec(url.pathname)?.[0] ?? "/v1";
  return errorResponse(ROUTE_FACES.ollama_api, new WrongBaseUrl(url.origin, base));
}
