/**
 * @module Builds the HTTP application from the route manifest: each path answers its own methods, any other
 * method gets 405 with `Allow`, unknown paths 404, all as JSON. Once the gateway stops, a path refuses what
 * still comes in its own face (lib/server/stopping_refusal.ts).
 */
import { Hono } from "hono";
import type { Deps } from "../deps.ts";
import { MethodNotAllowed, NotFound } from "../errors.ts";
import { FACES, ROUTE_FACES } from "../faces/mod.ts";
import { type Client, newClient } from "../http/client.ts";
import { signalCut } from "../runtime/request_cut.ts";
import { errorResponse } from "../http/respond.ts";
import { isPending } from "../runtime/sync_or_promise.ts";
import { withCors } from "./cors.ts";
import type { RouteHandler, RouteModule } from "./route.ts";
import { staticResponse } from "./static_files.ts";
import { STOPPED } from "./drain.ts";
import { stoppingResponse } from "./stopping_refusal.ts";
import { notFoundResponse } from "../discovery/not_served.ts";

export interface ManifestEntry {
  path: string;
  module: RouteModule;
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

/**
 * The request's `Client`, as the gateway hands it in (Hono's "bindings"); a request handed to the app without
 * one (by another caller) follows its own signal.
 */
const clientOf = (request: Request, client: Client | undefined) =>
  client ?? newClient(signalCut(request.signal));

export function buildApp(deps: Deps, manifest: readonly ManifestEntry[]): Hono<{ Bindings: Client }> {
  const app = new Hono<{ Bindings: Client }>();
  // Paths without parameters are answered straight from this table, built from the same registrations as the
  // router, which answers everything else: a router's dispatch and context cost a chat request 1.7 KB of
  // allocation and 0.24 µs (lib/runtime/README.md).
  const exact = new Map<string, RouteHandler>();
  for (const { path, module } of manifest) {
    const handlers = module.handlers(deps);
    const allow = Object.keys(handlers);
    const face = ROUTE_FACES[module.face];
    // A stopping gateway's refusal of what still comes; inside the CORS wrapper, so a page can read it.
    const refuse = module.refusal?.(deps) ?? (() => stoppingResponse(face));
    const answer: RouteHandler = (request, client) => {
      const handler = handlers[request.method];
      if (!handler) return errorResponse(face, new MethodNotAllowed(request.method, allow));
      return client.cut === STOPPED ? refuse(request, client) : handler(request, client);
    };
    const entry: RouteHandler = module.cors
      ? (request, client) => withCors(deps, allow, request, client, answer)
      : answer;
    if (!/[:*]/.test(path)) exact.set(path, entry);
    app.all(path, (c) => entry(c.req.raw, clientOf(c.req.raw, c.env)));
  }
  app.on(["GET", "HEAD"], "/static/*", (c) => staticResponse(c.req.path, c.req.raw) ?? c.notFound());
  // Ollama clients read only Ollama's error shape; its other endpoints get it (lib/discovery/not_served.ts).
  app.notFound((c) => notFoundResponse(c.req.path) ?? errorResponse(FACES.openai, new NotFound(c.req.path)));
  app.onError(failed);
  const routed = app.fetch;
  app.fetch = (request, client, ctx) => {
    // The router answers HEAD as GET without a body; it keeps doing that.
    const path = request.method === "HEAD" ? undefined : plainPath(request.url);
    const entry = path === undefined ? undefined : exact.get(path);
    if (!entry) return routed(request, client, ctx);
    try {
      const answer = entry(request, clientOf(request, client as Client | undefined));
      return isPending(answer) ? answer.catch(failed) : answer;
    } catch (error) {
      return failed(error);
    }
  };
  return app;
}
