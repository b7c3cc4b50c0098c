/** Which servers may serve a key: enabled, carrying its model (by tag or alias), inside its cluster if it has one. */
import type { KeyRecord, ServedModel, ServerRecord } from "../store/records.ts";
import type { Snapshot } from "../store/view.ts";

export interface Candidate {
  server: ServerRecord;
  model: ServedModel;
}

export function findCandidates(snapshot: Snapshot, key: Pick<KeyRecord, "model" | "cluster">): Candidate[] {
  const members = key.cluster === undefined
    ? undefined
    : new Set(snapshot.clusters.get(key.cluster)?.servers);
  const out: Candidate[] = [];
  for (const server of snapshot.servers.values()) {
    if (!server.enabled || (members && !members.has(server.name))) continue;
    const model = server.models.find((m) => m.tag === key.model || m.alias === key.model);
    if (model) out.push({ server, model });
  }
  return out;
}
