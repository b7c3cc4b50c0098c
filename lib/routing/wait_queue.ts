/**
 * @module The gateway's wait queue: requests that found every candidate server full wait here, in order of
 * a virtual arrival time. Priority moves a request's virtual arrival earlier by a fixed step per level
 * instead of giving it a separate line, so a high-priority request overtakes a low one that arrived up to two
 * steps before it, never one that has waited longer than that: low priority is slower, never starved.
 *
 * Before arrival time comes fairness between tenants (a key, or its user): start-time fair queueing in rounds.
 * Each request of a tenant starts a round after the tenant's previous one (a high-priority tenant's after half
 * a round, a low one's after two), and never before the round being served, counting what the tenant already
 * has running as rounds taken. So a burst from one key spreads over the coming rounds while every other
 * tenant's next request goes in the current one: tenants that always have requests waiting share the slots
 * in proportion to their priority's weight, however many each sends at once, and none is starved. A full
 * queue makes room for a tenant holding fewer of it by refusing the newest request of the one holding most.
 */
import type { Candidate } from "./candidates.ts";
import type { RouteReason } from "./scorer.ts";
import { flowOf, type Tenant } from "./tenants.ts";

export type Priority = "high" | "normal" | "low";
export const PRIORITIES: readonly Priority[] = ["high", "normal", "low"];

const AHEAD: Record<Priority, number> = { high: 2, normal: 1, low: 0 };
/** Rounds one request takes: a high-priority tenant gets twice a normal one's share, a low one half. */
const ROUND_COST: Record<Priority, number> = { high: 0.5, normal: 1, low: 2 };

export interface Waiter<T> {
  model: string;
  candidates: Candidate[];
  enqueuedAt: number;
  /** Arrival time moved earlier by priority: the queue's order within a round. */
  virtual: number;
  /** The fair-queueing round it starts in: the queue's order. */
  round: number;
  deadline: number;
  /** What the scheduler needs to place it later. */
  context: T;
  /** Times a request behind it left the queue first (for a cached prefix or a loaded model). */
  overtaken: number;
  tenant?: Tenant;
  admit(order: Candidate[], reason: RouteReason): void;
  refuse(error: Error): void;
}

export interface QueueFigures {
  model: string;
  depth: number;
  /** How long the longest-waiting request has waited, ms. */
  oldestWaitMs: number;
}

export class WaitQueue<T> {
  readonly #waiters: Waiter<T>[] = [];
  readonly #depth = new Map<string, number>();
  /** The round being served: that of the last request let go. */
  #round = 0;
  /** Per flow with requests waiting: the round its next request starts in. */
  readonly #next = new Map<string, number>();
  /** Requests waiting per flow. */
  readonly #waiting = new Map<string, number>();

  constructor(readonly priorityStepMs: number) {}

  virtualTime(now: number, priority: Priority): number {
    return now - AHEAD[priority] * this.priorityStepMs;
  }

  /** The round a request of `tenant` starts in, having `running` requests in flight already. */
  round(priority: Priority, tenant?: Tenant, running = 0): number {
    if (!tenant) return this.#round;
    const flow = flowOf(tenant);
    const start = Math.max(this.#round + running * ROUND_COST[priority], this.#next.get(flow) ?? 0);
    this.#next.set(flow, start + ROUND_COST[priority]);
    return start;
  }

  get length(): number {
    return this.#waiters.length;
  }

  depth(model: string): number {
    return this.#depth.get(model) ?? 0;
  }

  /** In round order, then virtual-time order; equal ones keep arrival order. */
  add(waiter: Waiter<T>): void {
    let i = this.#waiters.length;
    while (i > 0 && before(waiter, this.#waiters[i - 1])) i--;
    this.#waiters.splice(i, 0, waiter);
    this.#depth.set(waiter.model, this.depth(waiter.model) + 1);
    if (waiter.tenant) bump(this.#waiting, flowOf(waiter.tenant), 1);
  }

  /** Removes it if still waiting; false when it already left. `served`: it leaves for a slot. */
  remove(waiter: Waiter<T>, served = false): boolean {
    const i = this.#waiters.indexOf(waiter);
    if (i < 0) return false;
    this.#waiters.splice(i, 1);
    const left = this.depth(waiter.model) - 1;
    if (left > 0) this.#depth.set(waiter.model, left);
    else this.#depth.delete(waiter.model);
    if (served) this.#round = Math.max(this.#round, waiter.round);
    if (waiter.tenant) {
      const flow = flowOf(waiter.tenant);
      // A flow with nothing waiting starts afresh from the round being served.
      if (bump(this.#waiting, flow, -1) === 0) this.#next.delete(flow);
    }
    return true;
  }

  /**
   * When the model's queue is full: the newest waiter of the key holding the most of it, if that key holds
   * more than one above what `tenant`'s key holds (else the newcomer is the one to refuse).
   */
  crowding(model: string, tenant?: Tenant): Waiter<T> | undefined {
    const held = new Map<string, number>();
    const newest = new Map<string, Waiter<T>>();
    for (const w of this.#waiters) {
      if (w.model !== model || !w.tenant) continue;
      const flow = flowOf(w.tenant);
      held.set(flow, (held.get(flow) ?? 0) + 1);
      const last = newest.get(flow);
      if (!last || w.enqueuedAt >= last.enqueuedAt) newest.set(flow, w);
    }
    let most: string | undefined;
    for (const [flow, n] of held) if (most === undefined || n > held.get(most)!) most = flow;
    const mine = tenant ? held.get(flowOf(tenant)) ?? 0 : 0;
    return most === undefined || held.get(most)! <= mine + 1 ? undefined : newest.get(most);
  }

  /** A copy in queue order, so callers may remove while walking it. */
  inOrder(): Waiter<T>[] {
    return [...this.#waiters];
  }

  figures(now: number): QueueFigures[] {
    const out = new Map<string, QueueFigures>();
    for (const w of this.#waiters) {
      const f = out.get(w.model) ?? { model: w.model, depth: 0, oldestWaitMs: 0 };
      f.depth++;
      f.oldestWaitMs = Math.max(f.oldestWaitMs, now - w.enqueuedAt);
      out.set(w.model, f);
    }
    return [...out.values()];
  }
}

function before(a: { round: number; virtual: number }, b: { round: number; virtual: number }): boolean {
  return a.round < b.round || (a.round === b.round && a.virtual < b.virtual);
}

function bump(counts: Map<string, number>, name: string, by: number): number {
  const next = (counts.get(name) ?? 0) + by;
  if (next > 0) counts.set(name, next);
  else counts.delete(name);
  return next;
}
