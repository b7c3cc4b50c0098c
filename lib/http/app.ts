/**
 * @module Builds the HTTP application from the route manifest: each path answers its own methods, any other
 * method gets 405 with `Allow`, unknown paths 404, all as JSON.
 */
import { Hono } from "hono";
import type { Deps } from "../deps.ts";
import { MethodNotAllowed, NotFound } from "../errors.ts";
import { FACES } from "../faces/mod.ts";
import { errorResponse } from "./respond.ts";
import type { RouteModule } from "./route.ts";
import { staticResponse } from "./static_files.ts";

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
    app.all(path, (c) => {
      const handler = handlers[c.req.method];
      if (!handler) return errorResponse(FACES[module.face], new MethodNotAllowed(c.req.method, allow));
      const request = c.req.raw;
      return handler(request, {
        address: peerAddress(c.env?.remoteAddr),
        signal: c.env?.signal ?? request.signal,
      });
    });
  }
  app.on(["GET", "HEAD"], "/static/*", (c) => staticResponse(c.req.path, c.req.raw) ?? c.notFound());
  app.notFound((c) => errorResponse(FACES.openai, new NotFound(c.req.path)));
  app.onError((error) => errorResponse(FACES.openai, error));
  return app;
}
