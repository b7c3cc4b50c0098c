/**
 * @module What the server state is built with, what it answers about a server's slots, and which failures
 * count against a server.
 */
import { GatewayError } from "../errors.ts";
import type { BreakerOptions } from "./breaker.ts";
import type { LearningOptions } from "./learned_slots.ts";
import type { Outcome, SlotsSource } from "./server_status.ts";
import type { SharedLoad } from "./shared_load.ts";

export interface ServerStateOptions {
  now: () => number;
  breaker?: Omit<BreakerOptions, "now">;
  /** Latency percentiles come from at most this many of the latest samples... */
  latencySamples?: number;
  /** ...no older than this. */
  latencyMaxAgeMs?: number;
  /** The admin's `--slots` of a server, if any: it overrides what is discovered or learned. */
  declaredSlots?: (server: string) => number | undefined;
  /** How the slots of a server that neither declares nor shows them are learned. */
  learning?: Partial<LearningOptions>;
  /** Every worker's load on each server, when this is one worker of several in a process. */
  shared?: SharedLoad;
  /**
   * How long the gateway's own loop was held up within a span (on the `now` clock), taken out of the time a
   * request waited for its first byte before learning from it. Stopped with the state.
   */
  loopLag?: { pausedBetween(from: number, to: number): number; stop(): void };
}

/** A server's slots as the scheduler uses them, and where the figure came from. */
export interface Slots {
  slots: number;
  source: SlotsSource;
  /** Of those, the ones known to run at once (a learned figure may be probing one above). */
  sure: number;
}

/** The outcome a failed request reports: only errors that say the server is unwell count against it. */
export function outcomeOf(error: unknown): Outcome {
  return error instanceof GatewayError && error.countsAgainstServer ? "failed" : "excused";
}
