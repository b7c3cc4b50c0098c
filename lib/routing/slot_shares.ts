/**
 * @module Each tenant's share of a model's slots while several use it. Fair queueing decides who gets a freed
 * slot; this decides whether a tenant may take a free one at all: a tenant seen sending requests for a model
 * in the last window keeps its fair share of that model's slots (an equal split between the active tenants)
 * free for itself, so another tenant's burst cannot take the last free slots out from under it, and its next
 * request starts at once instead of waiting for a slot to turn over. What is kept for a tenant is never more
 * than it ran at once lately: one that sends a request at a time keeps one slot, not half the model's
 * capacity, so a key that called once does not halve another's throughput for the window. A tenant within its
 * own share is never held back. A lone tenant has every slot.
 *
 * The cost is capacity held idle while an active tenant reads its answer: bounded by the window, and only
 * while tenants contend.
 */
import { flowOf, type Tenant } from "./tenants.ts";

/** Free and total slots of a model's servers: as the scheduler counts them, and those sure to run. */
export interface Room {
  free: number;
  total: number;
  sureFree: number;
  sureTotal: number;
}

interface Seen {
  /** When it last sent a request for the model. */
  at: number;
  /** The most requests it had running at once, counting the one arriving, since it became active. */
  peak: number;
}

export class SlotShares {
  /** Per model, per flow. */
  readonly #seen = new Map<string, Map<string, Seen>>();

  constructor(readonly windowMs: number, readonly running: (tenant: Tenant) => number) {}

  /** A request of `tenant` for `model` arrived. */
  arrived(model: string, tenant: Tenant, now: number): void {
    const flows = this.#seen.get(model) ?? this.#seen.set(model, new Map()).get(model)!;
    const flow = flowOf(tenant);
    const running = this.running(tenant) + 1;
    const seen = flows.get(flow);
    if (!seen || now - seen.at > this.windowMs) flows.set(flow, { at: now, peak: running });
    else {
      seen.at = now;
      if (running > seen.peak) seen.peak = running;
    }
  }

  /** Whether tenants contend for `model` now: only then is a share worth counting. */
  contended(model: string): boolean {
    return this.windowMs > 0 && (this.#seen.get(model)?.size ?? 0) >= 2;
  }

  /**
   * Whether `tenant` may take a free slot of `model`'s servers now. While tenants contend only the slots the
   * servers are sure to run count (`sure…`): one a learned figure is probing would make whoever takes it wait
   * inside the server, and a slot kept for a tenant must start its request at once.
   */
  mayTake(model: string, tenant: Tenant | undefined, room: Room, now: number): boolean {
    if (room.free <= 0) return false;
    if (this.windowMs === 0) return true;
    const flows = this.#seen.get(model);
    if (!tenant || !flows || flows.size < 2) return true;
    const mine = flowOf(tenant);
    let active = 0;
    for (const [flow, seen] of flows) {
      if (now - seen.at <= this.windowMs) active++;
      else flows.delete(flow);
    }
    if (active < 2) return true;
    const free = room.sureFree, total = room.sureTotal;
    if (free <= 0) return false;
    const fair = Math.max(1, Math.floor(total / active));
    if (this.running(tenant) < fair) return true;
    let keptForOthers = 0;
    for (const [flow, seen] of flows) {
      if (flow !== mine) {
        keptForOthers += Math.max(0, Math.min(fair, seen.peak) - this.running(tenantOfFlow(flow)));
      }
    }
    return free - 1 >= keptForOthers;
  }
}

/** The tenant a flow name stands for: enough to count its running requests. */
function tenantOfFlow(flow: string): Tenant {
  return flow.startsWith("user:") ? { key: "", user: flow.slice(5) } : { key: flow.slice(4) };
}
