/**
 * @module What a file under routes/ exports: the methods it answers and the face whose error format the path
 * speaks, so even a 405 there, or a stopping gateway's refusal, reads like the rest of that API; and the
 * public chat path, which hands its requests to the pipeline.
 */
import type { Deps } from "../deps.ts";
import { ROUTE_FACES, type RouteFace } from "../faces/mod.ts";
import type { Client } from "../http/client.ts";
import { readAsJson } from "../http/read_body.ts";
import { runChat } from "../pipeline.ts";
import { refuseChat } from "./stopping_refusal.ts";

/** Answers one method of a path, for one client. */
export type RouteHandler = (request: Request, client: Client) => Promise<Response> | Response;

export interface RouteModule {
  face: RouteFace;
  handlers(deps: Deps): Partial<Record<string, RouteHandler>>;
  /** A path for clients, web pages among them: it answers CORS preflights (lib/server/cors.ts). */
  cors?: boolean;
  /**
   * How a request for one of its methods is refused once the gateway is stopping, where more is due than the
   * face's 503 (lib/server/stopping_refusal.ts): a path whose requests are recorded records its refusals too.
   */
  refusal?(deps: Deps): RouteHandler;
}

/** A public chat path: POST runs the pipeline in the given face. */
export function chatRoute(face: RouteFace): RouteModule {
  const lenient = face === "ollama_api";
  return {
    face,
    cors: true,
    handlers: (deps) => ({
      POST: (request, client) =>
        runChat(ROUTE_FACES[face], lenient ? readAsJson(request) : request, client, deps),
    }),
    refusal: (deps) => (request, client) => refuseChat(ROUTE_FACES[face], request, client, deps),
  };
}
