/**
 * @module Scheduling: where a request goes and when. It ranks the candidates with the scorer and sends the
 * request at once when the best one has a free slot, holding that slot for it until it begins; when every
 * candidate is full it waits in the wait queue (bounded in length per model and in time), and leaves it the
 * moment a slot frees (the server state says so synchronously), its time runs out (one sweep timer for the
 * whole queue, running only while something waits) or its client leaves. The pipeline gets an ordered list
 * of candidates, how long the request waited for them, and, once a server answered, why it was that one;
 * how the answer tells the client is the pipeline's affair.
 *
 * The "weighted" policy is the gateway before scheduling (a weighted random order, no slots, no queue), kept
 * so the two can be compared on one workload.
 */
import type { ChatMessage } from "../chat/types.ts";
import { ClientClosed, GatewayError, QueueFull, QueueTimeout } from "../errors.ts";
import { AffinityTable, prefixPrints } from "./affinity.ts";
import { hasFreeSlot, roomOver } from "./free_slots.ts";
import type { Candidate } from "./candidates.ts";
import { rank, type RouteReason } from "./scorer.ts";
import type { ServerState } from "./server_state.ts";
import { SlotShares } from "./slot_shares.ts";
import type { Tenant } from "./tenants.ts";
import { type Priority, type QueueFigures, type Waiter, WaitQueue } from "./wait_queue.ts";
import { weightedOrder } from "./weighted_order.ts";
import { coldStartPays } from "./cold_start.ts";
import type { Cut } from "../runtime/request_cut.ts";

export type RoutingPolicy = "scheduled" | "weighted";

export interface SchedulerOptions {
  state: ServerState;
  now: () => number;
  random: () => number;
  policy?: RoutingPolicy;
  maxWaitMs?: number;
  /** Requests waiting per model at most. */
  maxQueue?: number;
  priorityStepMs?: number;
  affinityTtlMs?: number;
  /** How long a tenant that sent a request keeps its share of the model's slots free for itself, ms. */
  shareWindowMs?: number;
}

/** What the metrics hear about; called synchronously, so it must only count. */
export interface RoutingObserver {
  routed(reason: RouteReason): void;
  waited(model: string, ms: number): void;
  refused(model: string, why: "full" | "timeout" | "left"): void;
}

export interface Route {
  candidates: Candidate[];
  /** How long the request waited in the queue for its candidates, ms (0: it did not). */
  waitedMs: number;
  /** The server that answered: notes the conversation's place and returns why the request went there. */
  served(candidate: Candidate): RouteReason;
}

interface Pending {
  model: string;
  prints: number[];
  roles: string[];
  affinity?: string;
  tenant?: Tenant;
}

/** How often a waiting request may be overtaken by later ones that find a cached prefix or a loaded model. */
const MAX_OVERTAKEN = 2;

/** The client left (499), or the stopping gateway ended the wait (503 shutting_down): the cut says which. */
function whyAborted(reason: unknown): GatewayError {
  return reason instanceof GatewayError ? reason : new ClientClosed();
}

export class Scheduler {
  readonly policy: RoutingPolicy;
  readonly maxWaitMs: number;
  readonly maxQueue: number;
  readonly #affinity: AffinityTable;
  readonly #queue: WaitQueue<Pending>;
  readonly #shares: SlotShares;
  #sweep?: ReturnType<typeof setInterval>;
  #pumping = false;
  observer?: RoutingObserver;

  constructor(readonly options: SchedulerOptions) {
    this.policy = options.policy ?? "scheduled";
    this.maxWaitMs = options.maxWaitMs ?? 30_000;
    this.maxQueue = options.maxQueue ?? 100;
    this.#queue = new WaitQueue(options.priorityStepMs ?? 5_000);
    this.#affinity = new AffinityTable(options.affinityTtlMs ?? 600_000, 100_000);
    this.#shares = new SlotShares(options.shareWindowMs ?? 15_000, (t) => options.state.tenants.of(t));
    options.state.subscribe(() => this.#pump());
  }

  /** Candidates for one request, in order; waits while every one of them is full. */
  place(
    model: string,
    candidates: Candidate[],
    messages: readonly ChatMessage[],
    priority: Priority = "normal",
    cut?: Cut,
    tenant?: Tenant,
  ): Route | Promise<Route> {
    const { state, now, random } = this.options;
    if (this.policy === "weighted") {
      const order = weightedOrder(candidates, (c) => c.server.weight, random);
      return this.#route(tenant ? order.map((c) => ({ ...c, tenant })) : order, "weighted", 0, [], model);
    }
    const prints = prefixPrints(model, messages);
    const roles = messages.map((m) => m.role);
    const affinity = this.#affinity.lookup(prints, roles, now());
    const pending: Pending = { model, prints, roles, affinity, tenant };
    if (tenant) this.#shares.arrived(model, tenant, now());
    if (this.#queue.depth(model) === 0) {
      const ranking = rank(candidates, state, { ...pending, random });
      const go = ranking.room && (ranking.warm || coldStartPays(ranking.warmSlots, 1, 0, this.maxWaitMs)) &&
        this.#mayTake(model, tenant, ranking.order);
      // Another worker may have taken the last slot since the ranking: then this one waits like the rest.
      const first = ranking.order[0];
      if (go && state.reserve(first.server.name, first.slots, tenant)) {
        return this.#admitted(ranking.order, ranking.reason, 0, pending);
      }
    }
    if (cut?.aborted) throw whyAborted(cut.reason);
    if (this.#queue.depth(model) >= this.maxQueue) {
      const crowding = this.#queue.crowding(model, tenant);
      this.observer?.refused(model, "full");
      if (!crowding || !this.#queue.remove(crowding)) throw new QueueFull(model, this.#retryAfterS());
      crowding.refuse(new QueueFull(model, this.#retryAfterS()));
    }
    return this.#wait(model, candidates, priority, pending, cut);
  }

  /** Requests waiting now, per model. */
  figures(): QueueFigures[] {
    return this.#queue.figures(this.options.now());
  }

  /** Ends the sweep; waiting requests are left to their clients (a stopping gateway ends them itself). */
  close(): void {
    clearInterval(this.#sweep);
    this.#sweep = undefined;
  }

  #wait(
    model: string,
    candidates: Candidate[],
    priority: Priority,
    pending: Pending,
    cut?: Cut,
  ): Promise<Route> {
    const now = this.options.now();
    const { promise, resolve, reject } = Promise.withResolvers<Route>();
    const leave = (reason: unknown) => {
      if (!this.#queue.remove(waiter)) return;
      this.observer?.refused(model, "left");
      reject(whyAborted(reason));
    };
    const waiter: Waiter<Pending> = {
      model,
      candidates,
      enqueuedAt: now,
      virtual: this.#queue.virtualTime(now, priority),
      round: this.#queue.round(
        priority,
        pending.tenant,
        pending.tenant && this.options.state.tenants.of(pending.tenant),
      ),
      tenant: pending.tenant,
      deadline: now + this.maxWaitMs,
      context: pending,
      overtaken: 0,
      admit: (order, reason) => {
        cut?.forget(leave);
        resolve(this.#admitted(order, reason, this.options.now() - now, pending));
      },
      refuse: (error) => {
        cut?.forget(leave);
        reject(error);
      },
    };
    this.#queue.add(waiter);
    cut?.listen(leave);
    this.#sweep ??= setInterval(() => this.#sweepNow(), Math.max(10, Math.min(250, this.maxWaitMs / 4)));
    // A slot may be free for it already (one kept for its tenant's share, or its turn comes first).
    this.#pump();
    return promise;
  }

  /** Whether the tenant may take a free slot of the model's servers, by its share of them. */
  #mayTake(model: string, tenant: Tenant | undefined, order: readonly Candidate[]): boolean {
    if (!tenant || !this.#shares.contended(model)) return true;
    const { state, now } = this.options;
    return this.#shares.mayTake(model, tenant, roomOver(state, order), now());
  }

  /** The first candidate's slot is held for it (`reserve`); `begin` there turns the hold into its claim. */
  #admitted(order: Candidate[], reason: RouteReason, waitedMs: number, pending: Pending): Route {
    const [first, ...rest] = order;
    const { tenant } = pending;
    return this.#route(
      [{ ...first, reserved: true, tenant }, ...(tenant ? rest.map((c) => ({ ...c, tenant })) : rest)],
      reason,
      waitedMs,
      pending.prints,
      pending.model,
    );
  }

  #route(order: Candidate[], reason: RouteReason, waitedMs: number, prints: number[], model: string): Route {
    const first = order[0]?.server.name;
    return {
      candidates: order,
      waitedMs,
      served: (candidate) => {
        const name = candidate.server.name;
        const why = name === first ? reason : "failover";
        if (this.policy === "scheduled") this.#affinity.remember(prints, name, this.options.now());
        this.observer?.routed(why);
        if (waitedMs > 0 || this.policy === "scheduled") this.observer?.waited(model, waitedMs);
        return why;
      },
    };
  }

  /**
   * Lets waiters go while slots are free, in queue order: first those whose conversation's prefix is cached
   * where a slot is free, then those a free slot can serve without a load (a freed slot goes to a request
   * whose model is there, even behind others in the queue), then those for whom a load is worth it.
   */
  #pump(): void {
    if (this.#pumping || this.#queue.length === 0) return;
    this.#pumping = true;
    try {
      const { state, random, now } = this.options;
      for (const pass of ["overdue", "affine", "warm", "any"] as const) {
        const passed: Waiter<Pending>[] = [];
        for (const w of this.#queue.inOrder()) {
          const skip = (pass === "affine" && w.context.affinity === undefined) ||
            (pass === "overdue" && w.overtaken < MAX_OVERTAKEN);
          // Ranked only where a slot is free: most changes free none, and ranking every waiter at each of
          // them was most of the queue's garbage.
          if (skip || !hasFreeSlot(state, w.candidates)) {
            passed.push(w);
            continue;
          }
          const live = w.candidates.filter((c) => state.isRoutable(c.server.name, c.model.tag));
          const ranking = rank(live, state, { ...w.context, random });
          const mayLoad = pass === "any";
          const go = ranking.room && (pass === "affine" ? ranking.affine : ranking.warm ||
            (mayLoad &&
              coldStartPays(
                ranking.warmSlots,
                this.#queue.depth(w.model),
                now() - w.enqueuedAt,
                this.maxWaitMs,
              ))) &&
            this.#mayTake(w.model, w.context.tenant, ranking.order);
          // Read only when it goes: the first of no candidates is a read past an array's end, which threw away
          // this function's optimized code again and again (some five times a second under load).
          const first = go ? ranking.order[0] : undefined;
          const { tenant } = w.context;
          if (!first || !state.reserve(first.server.name, first.slots, tenant)) {
            passed.push(w);
            continue;
          }
          if (!this.#queue.remove(w, true)) {
            state.release(first.server.name, tenant);
            continue;
          }
          // Going first for a cached prefix or a loaded model is bounded: whoever it overtakes soon goes next.
          if (pass === "affine" || pass === "warm") { for (const p of passed) p.overtaken++; }
          w.admit(ranking.order, ranking.reason);
        }
      }
    } finally {
      this.#pumping = false;
    }
  }

  #sweepNow(): void {
    const now = this.options.now();
    for (const w of this.#queue.inOrder()) {
      if (now < w.deadline || !this.#queue.remove(w)) continue;
      this.observer?.refused(w.model, "timeout");
      this.observer?.waited(w.model, now - w.enqueuedAt);
      w.refuse(new QueueTimeout(w.model, now - w.enqueuedAt, this.#retryAfterS()));
    }
    this.#pump();
    if (this.#queue.length === 0) this.close();
  }

  /** A hint, not a promise: a quarter of the longest wait, at least a second. */
  #retryAfterS(): number {
    return Math.max(1, Math.ceil(this.maxWaitMs / 4000));
  }
}
