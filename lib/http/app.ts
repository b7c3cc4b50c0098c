/**
 * @module Builds the HTTP application from the route manifest: each path answers its own methods, any other
 * method gets 405 with `Allow`, unknown paths 404, all as JSON. Once the gateway stops, a path refuses what
 * still comes in its own face (lib/http/stopping_refusal.ts).
 */
import { Hono } from "hono";
import type { Deps } from "../deps.ts";
import { MethodNotAllowed, NotFound } from "../errors.ts";
import { FACES, ROUTE_FACES } from "../faces/mod.ts";
import { withCors } from "./cors.ts";
import type { SecretMemo } from "../auth/secret_memo.ts";
import { errorResponse } from "./respond.ts";
import type { RouteModule } from "./route.ts";
import { staticResponse } from "./static_files.ts";
import { STOPPED } from "./drain.ts";
import { stoppingResponse } from "./stopping_refusal.ts";
import { notFoundResponse } from "../discovery/not_served.ts";

export interface ManifestEntry {
  path: string;
  module: RouteModule;
}

/** Per-connection facts handed in by the server (Deno.serve's second argument). */
export interface ConnectionEnv {
  remoteAddr?: Deno.Addr;
  /** Aborts when the client leaves or the gateway stops waiting for the request; else the request's own. */
  signal?: AbortSignal;
  /** The connection's (see `lib/auth/secret_memo.ts`), where the gateway's own listener serves it. */
  secrets?: SecretMemo;
}

function peerAddress(addr: Deno.Addr | undefined): string | undefined {
  return addr && "hostname" in addr ? addr.hostname : undefined;
}

/** The path of a request URL (`http://host/path?query`), without decoding: undefined if it needs any. */
function plainPath(url: string): string | undefined {
  const start = url.indexOf("/", url.indexOf("://") + 3);
  if (start < 0) return "/";
  const query = url.indexOf("?", start);
  const path = query < 0 ? url.slice(start) : url.slice(start, query);
  return path.includes("%") ? undefined : path;
}

/** What a thrown error becomes when nothing nearer answered it. */
const failed = (error: unknown) => errorResponse(FACES.openai, error);

type Answer = (request: Request, env: ConnectionEnv | undefined) => Response | Promise<Response>;

export function buildApp(deps: Deps, manifest: readonly ManifestEntry[]): Hono<{ Bindings: ConnectionEnv }> {
  const app = new Hono<{ Bindings: ConnectionEnv }>();
  // Paths without parameters are answered straight from this table, before the router: chat requests are
  // most of the traffic, and a router context per request costs more than the lookup.
  const exact = new Map<string, Answer>();
  for (const { path, module } of manifest) {
    const handlers = module.handlers(deps);
    const allow = Object.keys(handlers);
    const face = ROUTE_FACES[module.face];
    // A stopping gateway's refusal of what still comes; inside the CORS wrapper, so a page can read it.
    const refuse = module.refusal?.(deps) ?? (() => stoppingResponse(face));
    const answer: Answer = (request, env) => {
      const handler = handlers[request.method];
      if (!handler) return errorResponse(face, new MethodNotAllowed(request.method, allow));
      const client = {
        address: peerAddress(env?.remoteAddr),
        signal: env?.signal ?? request.signal,
        secrets: env?.secrets,
      };
      return client.signal === STOPPED ? refuse(request, client) : handler(request, client);
    };
    const entry: Answer = module.cors
      ? (request, env) => withCors(deps, allow, request, () => answer(request, env), env?.secrets)
      : answer;
    if (!/[:*]/.test(path)) exact.set(path, entry);
    app.all(path, (c) => entry(c.req.raw, c.env));
  }
  app.on(["GET", "HEAD"], "/static/*", (c) => staticResponse(c.req.path, c.req.raw) ?? c.notFound());
  // Ollama clients read only Ollama's error shape; its other endpoints get it (lib/discovery/not_served.ts).
  app.notFound((c) => notFoundResponse(c.req.path) ?? errorResponse(FACES.openai, new NotFound(c.req.path)));
  app.onError(failed);
  const routed = app.fetch;
  app.fetch = (request, env, ctx) => {
    // The router answers HEAD as GET without a body; it keeps doing that.
    const path = request.method === "HEAD" ? undefined : plainPath(request.url);
    const entry = path === undefined ? undefined : exact.get(path);
    if (!entry) return routed(request, env, ctx);
    try {
      const answer = entry(request, env);
      return answer instanceof Promise ? answer.catch(failed) : answer;
    } catch (error) {
      return failed(error);
    }
  };
  return app;
}
