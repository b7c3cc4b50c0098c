/**
 * @module CORS for the client paths, so web pages can call the gateway with a key.
 *
 * A preflight carries no key, so it cannot know whose request follows: it allows the path's methods and the
 * headers asked for, to any origin, and says nothing about keys. The decision is the real request's: its
 * answer carries `Access-Control-Allow-Origin` (the request's own origin) only when the policy's origin rule
 * (lib/policy/page_origin.ts) admits the page for the request's key; otherwise the browser keeps the answer
 * from the page. The key is the one the path's own handler found (the pipeline, discovery), noted on the
 * request's `Client`; only for a path that asks for none is it looked up here. No credentials mode: keys are
 * bearer tokens, not cookies.
 */
import { authenticate } from "../auth/mod.ts";
import type { Deps } from "../deps.ts";
import type { Client } from "../http/client.ts";
import { pageMayRead } from "../policy/page_origin.ts";
import type { KeyRecord } from "../store/records.ts";
import type { RouteHandler } from "./route.ts";

/** Headers a page may read besides the CORS-safelisted ones. */
const EXPOSED = "Retry-After, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, x-should-retry";
/**
 * What a page may send when its preflight's list of headers is not a plain one: a key either way, and the
 * headers Anthropic's browser clients send (a plain list is allowed as asked).
 */
const DEFAULT_HEADERS =
  "Authorization, Content-Type, X-Api-Key, anthropic-version, anthropic-beta, anthropic-dangerous-direct-browser-access";
const TOKEN_LIST = /^[\w-]+(\s*,\s*[\w-]+)*$/;
/** Browsers cap it (Chromium at 2 h); 10 minutes spares most preflights without pinning a change for long. */
const MAX_AGE_S = "600";

function preflight(request: Request, allow: readonly string[]): Response {
  const origin = request.headers.get("origin");
  const asked = request.headers.get("access-control-request-headers")?.trim() ?? "";
  const headers = new Headers({ Allow: [...allow, "OPTIONS"].join(", "), Vary: "Origin" });
  if (origin) {
    headers.set("Access-Control-Allow-Origin", origin);
    headers.set("Access-Control-Allow-Methods", allow.join(", "));
    headers.set("Access-Control-Allow-Headers", TOKEN_LIST.test(asked) ? asked : DEFAULT_HEADERS);
    headers.set("Access-Control-Max-Age", MAX_AGE_S);
  }
  return new Response(null, { status: 204, headers });
}

/** The request's key as its handler found it; looked up here only when no handler asked. */
async function keyOf(request: Request, client: Client, deps: Deps): Promise<KeyRecord | null> {
  if (client.key !== undefined) return client.key;
  try {
    return await authenticate(request.headers, deps.view, client.secrets);
  } catch {
    // No key, or not a valid one: the origin lists decide.
    return null;
  }
}

function setHeaders(response: Response, headers: Record<string, string>): Response {
  try {
    for (const name in headers) {
      if (name === "Vary") response.headers.append(name, headers[name]);
      else response.headers.set(name, headers[name]);
    }
    return response;
  } catch {
    // A response with immutable headers (one passed through from fetch) gets a copy.
    return setHeaders(new Response(response.body, response), headers);
  }
}

/** Answers preflights on a client path, and marks its answers readable by the origins that may read them. */
export function withCors(
  deps: Deps,
  allow: readonly string[],
  request: Request,
  client: Client,
  answer: RouteHandler,
): Response | Promise<Response> {
  if (request.method === "OPTIONS") return preflight(request, allow);
  const origin = request.headers.get("origin");
  // Without an Origin (SDKs, scripts) there is nothing to decide, and the chat path pays nothing for CORS.
  if (!origin) return answer(request, client);
  return markReadable(deps, origin, request, client, answer(request, client));
}

async function markReadable(
  deps: Deps,
  origin: string,
  request: Request,
  client: Client,
  answered: Response | Promise<Response>,
): Promise<Response> {
  const response = await answered;
  if (!pageMayRead(origin, await keyOf(request, client, deps), deps.config.corsOrigins)) {
    return setHeaders(response, { Vary: "Origin" });
  }
  return setHeaders(response, {
    Vary: "Origin",
    "Access-Control-Allow-Origin": origin,
    "Access-Control-Expose-Headers": EXPOSED,
  });
}
