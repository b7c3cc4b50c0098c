/**
 * @module The slots the scheduler counts for a server: the admin's `--slots` (`declared`, here or as the
 * candidate's record says), else what the server showed (`discovered`), else what the gateway learned (where
 * a process's workers share the load, the figure the last of them learned). Asked per candidate on every
 * request, so the sources come as arguments, not in an object made for each question.
 */
import type { Slots } from "./server_options.ts";
import type { Entry } from "./server_entry.ts";
import type { SharedLoad } from "./shared_load.ts";

/** The figure alone, what a check for a free slot needs; `learnStart` is where learning starts from. */
export function slotLimit(
  server: string,
  declared: number | undefined,
  entry: Entry | undefined,
  shared: SharedLoad | undefined,
  learnStart: number,
): number {
  return declared ?? entry?.discoveredSlots ??
    (shared?.learned(server) || entry?.learned.limit || learnStart);
}

/** The figure, where it comes from, and how many of them the server is sure to run (proven, when learned). */
export function slotFigures(
  server: string,
  declared: number | undefined,
  entry: Entry | undefined,
  shared: SharedLoad | undefined,
  learnStart: number,
  now: () => number,
): Slots {
  const slots = slotLimit(server, declared, entry, shared, learnStart);
  if (declared !== undefined) return { slots, source: "declared", sure: slots };
  if (entry?.discoveredSlots !== undefined) return { slots, source: "discovered", sure: slots };
  if (!entry) return { slots, source: "learned", sure: slots };
  return { slots, source: "learned", sure: Math.min(slots, entry.learned.proven(now()) ?? slots) };
}
