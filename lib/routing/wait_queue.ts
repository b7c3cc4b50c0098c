/**
 * @module The gateway's wait queue: requests that found every candidate server full wait here, in order of
 * a virtual arrival time. Priority moves a request's virtual arrival earlier by a fixed step per level
 * instead of giving it a separate line, so a high-priority request overtakes a low one that arrived up to two
 * steps before it, never one that has waited longer than that: low priority is slower, never starved.
 */
import type { Candidate } from "./candidates.ts";
import type { RouteReason } from "./scorer.ts";

export type Priority = "high" | "normal" | "low";
export const PRIORITIES: readonly Priority[] = ["high", "normal", "low"];

const AHEAD: Record<Priority, number> = { high: 2, normal: 1, low: 0 };

export interface Waiter<T> {
  model: string;
  candidates: Candidate[];
  enqueuedAt: number;
  /** Arrival time moved earlier by priority: the queue's order. */
  virtual: number;
  deadline: number;
  /** What the scheduler needs to place it later. */
  context: T;
  /** Times a request behind it left the queue first (for a cached prefix or a loaded model). */
  overtaken: number;
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

  constructor(readonly priorityStepMs: number) {}

  virtualTime(now: number, priority: Priority): number {
    return now - AHEAD[priority] * this.priorityStepMs;
  }

  get length(): number {
    return this.#waiters.length;
  }

  depth(model: string): number {
    return this.#depth.get(model) ?? 0;
  }

  /** In virtual-time order; equal times keep arrival order. */
  add(waiter: Waiter<T>): void {
    let i = this.#waiters.length;
    while (i > 0 && this.#waiters[i - 1].virtual > waiter.virtual) i--;
    this.#waiters.splice(i, 0, waiter);
    this.#depth.set(waiter.model, this.depth(waiter.model) + 1);
  }

  /** Removes it if still waiting; false when it already left. */
  remove(waiter: Waiter<T>): boolean {
    const i = this.#waiters.indexOf(waiter);
    if (i < 0) return false;
    this.#waiters.splice(i, 1);
    const left = this.depth(waiter.model) - 1;
    if (left > 0) this.#depth.set(waiter.model, left);
    else this.#depth.delete(waiter.model);
    return true;
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
