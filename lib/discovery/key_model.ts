/**
 * The one model a key sees, as discovery shows it: the key's own model name, the name format-B clients see
 * (a server's alias), and what the health probes learnt about it. Read from the same store snapshot and live
 * server state the pipeline routes with; never from a backend at call time, and never naming a server.
 */
import { findCandidates, type ModelFacts, type ServerState } from "../routing/mod.ts";
import type { KeyRecord } from "../store/records.ts";
import type { Snapshot } from "../store/view.ts";
import { canonicalModel } from "../routing/server_state.ts";

export interface KeyModel {
  /** The name the key is bound to: OpenAI clients' model id. */
  id: string;
  /** The name format-B answers carry: the preferred server's alias, else its tag. */
  ollamaName: string;
  /** Every name the model goes by for this key (tags and aliases, with and without `:latest`). */
  names: Set<string>;
  facts?: ModelFacts;
  /** When the model last changed, as far as anyone says (the servers, else the key). */
  modifiedAt: string;
}

export function keyModel(key: KeyRecord, snapshot: Snapshot, servers: ServerState): KeyModel {
  // The server a request would most likely reach first: a routable one, the heaviest, then by name.
  const candidates = findCandidates(snapshot, key).sort((a, b) =>
    Number(servers.isRoutable(b.server.name, b.model.tag)) -
      Number(servers.isRoutable(a.server.name, a.model.tag)) ||
    b.server.weight - a.server.weight ||
    (a.server.name < b.server.name ? -1 : a.server.name > b.server.name ? 1 : 0)
  );
  const names = new Set([key.model]);
  for (const c of candidates) {
    names.add(c.model.tag);
    if (c.model.alias) names.add(c.model.alias);
  }
  for (const name of [...names]) names.add(canonicalModel(name));
  const facts = candidates.map((c) => servers.modelFacts(c.server.name, c.model.tag)).find((f) => f);
  const first = candidates[0]?.model;
  return {
    id: key.model,
    ollamaName: first ? first.alias ?? first.tag : key.model,
    names,
    facts,
    modifiedAt: facts?.modifiedAt ?? key.createdAt,
  };
}

/** Whether a client's model name means the key's model. */
export function namesKeyModel(model: KeyModel, name: string): boolean {
  return model.names.has(name) || model.names.has(canonicalModel(name));
}
