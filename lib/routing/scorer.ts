/**
 * @module The scorer: one number per candidate from what the servers are doing, highest first. A server
 * with a free slot always beats a full one (a full server queues invisibly); among those with room, the
 * server holding this conversation's prefix comes first; then, alike, every server where the request costs
 * nobody anything: one that has the model loaded, one that never said what it holds, and one that can load it
 * into spare memory (a load where there is room is paid once and adds the server's capacity to the model's);
 * last, one that would have to unload another model. Within a tier the operator's weights decide, by a
 * weighted random draw, so a higher weight receives more traffic as the spec promises (a free slot the server
 * is sure to run comes before one its learned figure is only probing). O(candidates), then a sort of those few.
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
  /** Whether sending it there costs nobody anything: the model is loaded (or may be), or memory is spare. */
  warm: boolean;
  /** Whether it is the server holding this conversation's prefix. */
  affine: boolean;
  /** Slots of the candidates holding the model, full or not: what the model can run without a load. */
  warmSlots: number;
}

/**
 * Efraimidis–Spirakis key: the lowest draw wins, with the chance of each in proportion to its weight. Mapped
 * into (0, 1) by the caller so it orders within a tier, never across. The weight alone decides, not how full
 * a server is: a server's share of the traffic is then its share of the weights, whatever its speed.
 */
function drawFor(weight: number, random: () => number): number {
  return -Math.log(1 - random()) / Math.max(weight, 1e-9);
}

export function rank(
  candidates: readonly Candidate[],
  state: ServerState,
  options: { affinity?: string; random: () => number },
): Ranking {
  let warmSlots = 0;
  const alone = candidates.length === 1;
  const scored = candidates.map((c) => {
    const name = c.server.name;
    const { slots, sure } = state.slots(name, c.server.slots);
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
      else tier = state.memoryFull(name) ? 1 : 3;
    }
    // A lone candidate has nothing to be ordered against, so it draws nothing.
    const draw = alone ? 1 : drawFor(c.server.weight, options.random);
    // Within a tier, a slot the server is sure to run comes before one a learned figure is probing.
    return {
      c: { ...c, slots },
      score: tier + (free > 0 && sure > load ? 0.5 : 0) + 0.5 / (1 + draw),
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
