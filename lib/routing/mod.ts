/**
 * @module Routing: which servers may serve a request, in which order, and failover across them. Knows
 * servers and keys, not wire formats.
 */
export { type Candidate, findCandidates } from "./candidates.ts";
export { weightedOrder } from "./weighted_order.ts";
export { type Attempt, dispatch } from "./dispatch.ts";
