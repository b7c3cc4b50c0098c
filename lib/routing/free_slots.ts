/**
 * @module What room a request's candidates have now: whether any routable one has a free slot (without one,
 * no ranking can let a waiting request go), and the slots free and in all over them, for a tenant's share.
 */
import type { Candidate } from "./candidates.ts";
import type { ServerState } from "./server_state.ts";
import type { Room } from "./slot_shares.ts";

/** Whether a routable candidate has a free slot: the scorer's `room` for them, without ranking them. */
export function hasFreeSlot(state: ServerState, candidates: readonly Candidate[]): boolean {
  for (const c of candidates) {
    const name = c.server.name;
    if (state.load(name) < state.limit(name, c.server.slots) && state.isRoutable(name, c.model.tag)) {
      return true;
    }
  }
  return false;
}

/** The slots over `order`: free and in all, and of those the ones each server is sure to run. */
export function roomOver(state: ServerState, order: readonly Candidate[]): Room {
  const room = { free: 0, total: 0, sureFree: 0, sureTotal: 0 };
  for (const c of order) {
    const { slots, sure } = state.slots(c.server.name, c.server.slots);
    const load = state.load(c.server.name);
    room.total += slots;
    room.free += Math.max(0, slots - load);
    room.sureTotal += sure;
    room.sureFree += Math.max(0, sure - load);
  }
  return room;
}
