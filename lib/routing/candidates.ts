/**
 * Which servers may serve a key: enabled, carrying its model (by tag or alias), inside its cluster if it has
 * one; and of those, which the live state lets through now (up, breaker not open, model really there).
 */
import { NoHealthyServer } from "../errors.ts";
import type { KeyRecord, ServedModel, ServerRecord } from "../store/records.ts";
import type { Snapshot } from "../store/view.ts";
import type { ServerState, Unavailable } from "./server_state.ts";
import type { Tenant } from "./tenants.ts";

export interface Candidate {
  server: ServerRecord;
  model: ServedModel;
  /** Requests the server runs at once, when the scheduler limits it; failover skips it while it is full. */
  slots?: number;
  /** The wait queue holds a slot here for this request (only ever on the first candidate). */
  reserved?: boolean;
  /** Whom the request is for, counted while it runs there. */
  tenant?: Tenant;
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

/**
 * The candidates the live state lets through. When none is, the 503 says why for each kind (no server at
 * all, or how many are down, open or lacking the model), never which server or where.
 */
export function routableCandidates(
  snapshot: Snapshot,
  key: Pick<KeyRecord, "model" | "cluster">,
  servers: ServerState,
): Candidate[] {
  const all = findCandidates(snapshot, key);
  if (all.length === 0) throw new NoHealthyServer(`No server is available for model "${key.model}"`);
  const routable: Candidate[] = [];
  const passed = new Map<Unavailable, number>();
  for (const c of all) {
    const why = servers.unavailable(c.server.name, c.model.tag);
    if (why === undefined) routable.push(c);
    else passed.set(why, (passed.get(why) ?? 0) + 1);
  }
  if (routable.length) return routable;
  const reasons = [...passed].map(([why, n]) => `${n} ${why}`).join(", ");
  throw new NoHealthyServer(
    `All ${all.length} server(s) for model "${key.model}" are unavailable: ${reasons}`,
  );
}
