/**
 * @module What a file under routes/ exports: the methods it answers and the face whose error format the path
 * speaks, so even a 405 there, or a stopping gateway's refusal, reads like the rest of that API.
 */
import type { Deps } from "../deps.ts";
import { ROUTE_FACES, type RouteFace } from "../faces/mod.ts";
import { type ClientInfo, runChat } from "../pipeline.ts";
import { refuseChat } from "./stopping_refusal.ts";

export type Handler = (request: Request, client: ClientInfo) => Promise<Response> | Response;

export interface RouteModule {
  face: RouteFace;
  handlers(deps: Deps): Partial<Record<string, Handler>>;
  /** A path for clients, web pages among them: it answers CORS preflights (lib/http/cors.ts). */
  cors?: boolean;
  /**
   * How a request for one of its methods is refused once the gateway is stopping, where more is due than the
   * face's 503 (lib/http/stopping_refusal.ts): a path whose requests are recorded records its refusals too.
   */
  refusal?(deps: Deps): Handler;
}

/** Ollama reads any body as JSON (its docs' curl lines send no Content-Type), so its own paths do too. */
export function readAsJson(request: Request): Request {
  if (/json/i.test(request.headers.get("content-type") ?? "")) return request;
  const headers = new Headers(request.headers);
  headers.set("content-type", "application/json");
  return new Request(request, { headers });
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
