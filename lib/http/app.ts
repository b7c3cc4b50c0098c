/**
 * @module Builds the HTTP application from the route manifest: each path answers its own methods, any other
 * method gets 405 with `Allow`, unknown paths 404, all as JSON.
 */
import { type Context, Hono } from "hono";
import type { Deps } from "../deps.ts";
import { MethodNotAllowed, NotFound } from "../errors.ts";
import { FACES, ROUTE_FACES } from "../faces/mod.ts";
import { withCors } from "./cors.ts";
import { errorResponse } from "./respond.ts";
import type { RouteModule } from "./route.ts";
import { staticResponse } from "./static_files.ts";
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
}

function peerAddress(addr: Deno.Addr | undefined): string | undefined {
  return addr && "hostname" in addr ? addr.hostname : undefined;
}

export function buildApp(deps: Deps, manifest: readonly ManifestEntry[]): Hono<{ Bindings: ConnectionEnv }> {
  const app = new Hono<{ Bindings: ConnectionEnv }>();
  for (const { path, module } of manifest) {
    const handlers = module.handlers(deps);
    const allow = Object.keys(handlers);
    const answer = (c: Context<{ Bindings: ConnectionEnv }>) => {
      const handler = handlers[c.req.method];
      if (!handler) return errorResponse(ROUTE_FACES[module.face], new MethodNotAllowed(c.req.method, allow));
      const request = c.req.raw;
      return handler(request, {
        address: peerAddress(c.env?.remoteAddr),
        signal: c.env?.signal ?? request.signal,
      });
    };
    app.all(path, (c) => module.cors ? withCors(deps, allow, c.req.raw, () => answer(c)) : answer(c));
  }
  app.on(["GET", "HEAD"], "/static/*", (c) => staticResponse(c.req.path, c.req.raw) ?? c.notFound());
  // Ollama clients read only Ollama's error shape; its other endpoints get it (lib/discovery/not_served.ts).
  app.notFound((c) => notFoundResponse(c.req.path) ?? errorResponse(FACES.openai, new NotFound(c.req.path)));
  app.onError((error) => errorResponse(FACES.openai, error));
  return app;
}
