/**
 * @module What a file under routes/ exports: the methods it answers and the face whose error format the path
 * speaks, so even a 405 there reads like the rest of that API.
 */
import type { Deps } from "../deps.ts";
import { type FaceName, FACES } from "../faces/mod.ts";
import { type ClientInfo, runChat } from "../pipeline.ts";

export type Handler = (request: Request, client: ClientInfo) => Promise<Response> | Response;

export interface RouteModule {
  face: FaceName;
  handlers(deps: Deps): Partial<Record<string, Handler>>;
}

/** A public chat path: POST runs the pipeline in the given face. */
export function chatRoute(face: FaceName): RouteModule {
  return {
    face,
    handlers: (deps) => ({ POST: (request, client) => runChat(FACES[face], request, client, deps) }),
  };
}
