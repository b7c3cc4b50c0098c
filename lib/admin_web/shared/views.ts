/**
 * @module What the admin page shows, as plain JSON: the same values are rendered on the server, handed to
 * the islands as props and sent over the live feed, so the three can never disagree on a field.
 */
import type { QueueFigures, ServerStatus } from "../../routing/mod.ts";
import type { PeriodName } from "../../usage/mod.ts";

/** A server as the page shows it: its live state, beside what the admin configured. */
export type ServerRow =
  & Pick<
    ServerStatus,
    | "name"
    | "health"
    | "breaker"
    | "inFlight"
    | "requestsLastMinute"
    | "errorsLastMinute"
    | "latencyP50Ms"
    | "latencyP95Ms"
    | "lastProbeAt"
    | "lastProbeMs"
    | "lastProbeError"
    | "version"
  >
  & Partial<Pick<ServerStatus, "slots" | "slotsSource">>
  & {
    kind: string;
    weight: number;
    enabled: boolean;
    /** Models the admin listed for the server. */
    configured: string[];
    /** What the server itself reports carrying and having loaded, when it says. */
    carried?: string[];
    loaded?: string[];
  };

export interface HealthView {
  /** When this view was taken, epoch ms. */
  at: number;
  servers: ServerRow[];
  /** Requests waiting at the gateway for a free server slot, per model (only models with any). */
  queues?: QueueFigures[];
}

export interface Tally {
  requests: number;
  /** Requests that did not end `ok`: refused, failed or cut short. */
  failed: number;
  promptTokens: number;
  completionTokens: number;
}

export interface UsageRow extends Record<PeriodName, Tally> {
  id: string;
  label: string;
  user?: string;
}

export interface RecentProblem {
  time: string;
  keyId?: string;
  /** The key as the page names it (name and hint); absent when no key was found. */
  key?: string;
  server?: string;
  format: string;
  status: string;
  /** The HTTP status the client saw. */
  httpStatus: number;
  /** How many refusals of the same key and reason the row stands for, when more than one. */
  count?: number;
  code?: string;
  tokens: number;
}

export interface UsageView {
  /** The current periods' labels, e.g. `d:2026-11-22`. */
  periods: Record<PeriodName, string>;
  totals: Record<PeriodName, Tally>;
  /** The busiest keys; with `otherKeys` and `noKey` they add up to `totals`. */
  keys: UsageRow[];
  /** Keys beyond the busiest, summed; absent when every key is listed. */
  otherKeys?: Record<PeriodName, Tally>;
  /** Requests refused before any key was found (no key, an unknown or malformed one). */
  noKey: Record<PeriodName, Tally>;
  /** Every user; with `noUser` and `noKey` they add up to `totals`. */
  users: UsageRow[];
  /** Requests with a key that belongs to no user. */
  noUser: Record<PeriodName, Tally>;
  /** The latest requests that failed or ended partial. */
  recent: RecentProblem[];
  /** The latest requests refused (bad key, limits, bad input), apart so a flood of them hides no failure. */
  rejected: RecentProblem[];
}
