/**
 * @module The scorer: one number per candidate from what the servers are doing, highest first. A server
 * with a free slot always beats a full one (a full server queues invisibly); among those with room, the
 * server holding this conversation's prefix beats one that merely has the model loaded, which beats one that
 * must load it (seconds, and it unloads someone else's model; a server that never said what it holds counts
 * as holding it, so servers without /api/ps are shared by weight as before), and a cold server with spare memory beats one
 * that would have to evict. Ties are broken by a weighted random draw on weight × the share of slots free, so
 * the operator's weights still share the load and emptier servers get more of it. O(candidates), then a sort of
 * those few.
 */
import type { Candidate } from "./candidates.ts";
import type { ServerState } from "./server_state.ts";

export type RouteReason = "affinity" | "loaded" | "cold" | "weighted" | "failover";

export interface Ranking {
  order: Candidate[];
  /** Why the first candidate is first. */
  reason: RouteReason;
  /** Whether the first candidate has a free slot (else every candidate is full). */
  room: boolean;
  /** Whether it has the model (or may have it): no load needed there. */
  warm: boolean;
  /** Whether it is the server holding this conversation's prefix. */
  affine: boolean;
  /** Slots of the candidates holding the model, full or not: what the model can run without a load. */
  warmSlots: number;
}

/** Slots of a server: the operator's `--slots`, else what the server showed, else the default. */
export function slotsOf(c: Candidate, state: ServerState, defaultSlots: number): number {
  return c.server.slots ?? state.discoveredSlots(c.server.name) ?? defaultSlots;
}

export function freeSlots(c: Candidate, state: ServerState, defaultSlots: number): number {
  return slotsOf(c, state, defaultSlots) - state.load(c.server.name);
}

/**
 * Emptier servers draw more often: the share of slots free, or for a server without a limit, fewer in
 * flight. Efraimidis–Spirakis key, mapped into (0, 1) by the caller so it orders within a tier, never across.
 */
function drawFor(weight: number, slots: number, load: number, random: () => number): number {
  const share = Number.isFinite(slots) ? Math.max(slots - load, 1) / slots : 1 / (1 + load);
  return -Math.log(1 - random()) / Math.max(weight * share, 1e-9);
}

export function rank(
  candidates: readonly Candidate[],
  state: ServerState,
  options: { affinity?: string; random: () => number; defaultSlots: number },
): Ranking {
  let warmSlots = 0;
  const alone = candidates.length === 1;
  const scored = candidates.map((c) => {
    const name = c.server.name;
    const slots = slotsOf(c, state, options.defaultSlots);
    const load = state.load(name);
    const free = slots - load;
    const loaded = state.hasLoaded(name, c.model.tag);
    if (loaded) warmSlots += slots;
    let tier = 0;
    let reason: RouteReason = "cold";
    if (free > 0) {
      if (name === options.affinity && loaded !== false) [tier, reason] = [4, "affinity"];
      else if (loaded) [tier, reason] = [3, "loaded"];
      // A server that does not say what it holds is not held against: the weights decide among those.
      else if (loaded === undefined) [tier, reason] = [3, "weighted"];
      else tier = state.memoryFull(name) ? 1 : 2;
    }
    // A lone candidate has nothing to be ordered against, so it draws nothing.
    const draw = alone ? 1 : drawFor(c.server.weight, slots, load, options.random);
    return {
      c: Number.isFinite(slots) ? { ...c, slots } : { ...c },
      score: tier + 1 / (1 + draw),
      reason,
      free,
    };
  });
  scored.sort((a, b) => b.score - a.score);
  const first = scored[0];
  return {
    order: scored.map((s) => s.c),
    reason: first?.reason ?? "cold",
    room: first !== undefined && first.free > 0,
    warm: first !== undefined && first.score >= 3,
    affine: first !== undefined && first.score >= 4,
    warmSlots,
  };
}
