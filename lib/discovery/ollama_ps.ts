/**
 * @module Ollama's `GET /api/ps`, scoped to the key: its one model, under its format-B name, listed when some
 * server the key's requests may go to holds it loaded, and an empty list when none does, so a client can tell
 * whether its next chat starts warm or waits for a load. What "loaded" means is the routing's own picture
 * (lib/routing/residency.ts: the servers' last `/api/ps`, corrected by what the gateway sent since); a server
 * that never said what it holds counts once the gateway sent it the model. Only routable servers count: a
 * server that is down or whose breaker is open serves nothing.
 *
 * Nothing names a server, and nothing a server alone knows is passed on: when a model unloads (`expires_at`)
 * and how much of it sits in GPU memory (`size_vram`) are a server's affair, shown as Ollama's zero values
 * (the zero time, 0), which clients with strict types still parse. `context_length` is the key's default
 * context where it sets one, else 0 (the server's own default, unknown here).
 */
import type { Deps } from "../deps.ts";
import { ROUTE_FACES } from "../faces/mod.ts";
import { errorResponse, jsonResponse } from "../http/respond.ts";
import type { Client } from "../http/client.ts";
import { findCandidates, type ServerState } from "../routing/mod.ts";
import type { KeyRecord } from "../store/records.ts";
import type { Snapshot } from "../store/view.ts";
import { discover } from "./access.ts";
import type { KeyModel } from "./key_model.ts";
import { details } from "./ollama_models.ts";

/** Go's zero time, as Ollama's own server writes a time it does not have. */
const UNKNOWN_TIME = "0001-01-01T00:00:00Z";

/** Whether a server the key's requests may reach holds its model loaded, as far as the gateway knows. */
export function loadedSomewhere(key: KeyRecord, snapshot: Snapshot, servers: ServerState): boolean {
  return findCandidates(snapshot, key).some((c) =>
    servers.hasLoaded(c.server.name, c.model.tag) === true && servers.isRoutable(c.server.name, c.model.tag)
  );
}

function running(key: KeyRecord, model: KeyModel) {
  return {
    name: model.ollamaName,
    model: model.ollamaName,
    size: model.facts?.sizeBytes ?? 0,
    digest: model.facts?.digest ?? "",
    details: details(model),
    expires_at: UNKNOWN_TIME,
    size_vram: 0,
    context_length: key.defaultCtx ?? 0,
  };
}

export async function ps(request: Request, client: Client, deps: Deps): Promise<Response> {
  try {
    const { key, model } = await discover(request, client, deps);
    const loaded = loadedSomewhere(key, deps.view.snapshot, deps.servers);
    return jsonResponse({ models: loaded ? [running(key, model)] : [] });
  } catch (error) {
    return errorResponse(ROUTE_FACES.ollama_api, error);
  }
}
