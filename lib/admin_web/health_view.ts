/**
 * @module The health view the page, the feed and the status endpoint show: every configured server beside
 * its live state, taken from the store's snapshot and the gateway's server status.
 */
import type { Snapshot } from "../store/view.ts";
import type { QueueFigures, ServerStatus } from "../routing/mod.ts";
import type { HealthView, ServerRow } from "./shared/views.ts";

/** Every configured server, with its live state when the gateway has any (a new one is `unknown`). */
export function healthView(
  snapshot: Snapshot,
  live: ServerStatus[],
  at: number,
  queues: QueueFigures[] = [],
): HealthView {
  const byName = new Map(live.map((s) => [s.name, s]));
  const servers = [...snapshot.servers.values()]
    .sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
    .map((record): ServerRow => {
      const s = byName.get(record.name);
      return {
        name: record.name,
        kind: record.kind,
        weight: record.weight,
        enabled: record.enabled,
        configured: record.models.map((m) => m.alias ? `${m.tag} (${m.alias})` : m.tag),
        carried: s?.models,
        loaded: s?.loadedModels,
        health: s?.health ?? "unknown",
        breaker: s?.breaker ?? "closed",
        inFlight: s?.inFlight ?? 0,
        requestsLastMinute: s?.requestsLastMinute ?? 0,
        errorsLastMinute: s?.errorsLastMinute ?? 0,
        latencyP50Ms: s?.latencyP50Ms,
        latencyP95Ms: s?.latencyP95Ms,
        lastProbeAt: s?.lastProbeAt,
        lastProbeMs: s?.lastProbeMs,
        lastProbeError: s?.lastProbeError,
        version: s?.version,
        // Before the gateway heard of the server only the admin's figure is known.
        slots: s?.slots ?? record.slots,
        slotsSource: s?.slotsSource ?? (record.slots === undefined ? undefined : "declared"),
      };
    });
  return { at, servers, queues };
}
