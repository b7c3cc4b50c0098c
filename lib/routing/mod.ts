/**
 * @module Routing: which servers may serve a request, in which order, failover across them, and the live
 * state (health probes, circuit breakers, load, loaded models) that decides which are worth trying, and the
 * scheduler that ranks them and holds requests in a wait queue while all are busy. Knows servers and keys,
 * not wire formats.
 */
export { type Candidate, findCandidates, routableCandidates } from "./candidates.ts";
export { weightedOrder } from "./weighted_order.ts";
export { type Attempt, dispatch } from "./dispatch.ts";
export { type Outcome, outcomeOf, ServerState, type ServerStatus } from "./server_state.ts";
export { HealthProber } from "./health.ts";
export { SharedLoad } from "./shared_load.ts";
export { LoopLag } from "./loop_lag.ts";
export { tenantOf } from "./tenants.ts";
export type { ModelFacts } from "./model_facts.ts";
export { type Route, type RoutingObserver, type RoutingPolicy, Scheduler } from "./scheduler.ts";
export type { RouteReason } from "./scorer.ts";
export { PRIORITIES, type Priority, type QueueFigures } from "./wait_queue.ts";
