/**
 * @module The shapes of a server's live state as others see it: what a probe found, and the status the admin
 * page and metrics read. Apart from `ServerState` so that module stays about keeping the state.
 */
import type { ModelFacts } from "./model_facts.ts";
import type { BreakerState } from "./breaker.ts";

export type Health = "unknown" | "up" | "down";

/**
 * How a request ended for its server. `excused`: it failed, but not through the server's fault (the client's
 * request was refused, an image went to a text-only model, the client left), so it feeds neither the error
 * count nor the breaker.
 */
export type Outcome = "ok" | "failed" | "excused";

/** Why a server is passed over: its probes fail, its breaker is open, or discovery did not find the model. */
export type Unavailable = "down" | "circuit open" | "model not found";

export interface ProbeResult {
  ok: boolean;
  /** Why the probe failed, in a few words and without any address. */
  error?: string;
  durationMs?: number;
  version?: string;
  /** Models the server carries; undefined when it could not say. */
  models?: readonly string[];
  /** Models loaded in memory now, where the backend says. */
  loaded?: readonly string[];
  /** Requests the server reports running and waiting (vLLM's /metrics), where it says. */
  running?: number;
  waiting?: number;
  /** What the model list says about each model, by its listed name (for model discovery). */
  facts?: ReadonlyMap<string, ModelFacts>;
}

/** The admin's `--slots`; what the server showed (vLLM's running while others waited); learned by the gateway. */
export type SlotsSource = "declared" | "discovered" | "learned";

/** One server's state as plain JSON; times are epoch milliseconds. */
export interface ServerStatus {
  name: string;
  health: Health;
  breaker: BreakerState;
  consecutiveFailures: number;
  inFlight: number;
  requestsLastMinute: number;
  /** Failures counted against the server. */
  errorsLastMinute: number;
  latencySamples: number;
  latencyP50Ms?: number;
  latencyP95Ms?: number;
  lastProbeAt?: number;
  lastProbeMs?: number;
  lastProbeError?: string;
  version?: string;
  models?: string[];
  loadedModels?: string[];
  /** Slots promised to requests leaving the wait queue, not yet begun. */
  reserved: number;
  /** Models the gateway believes loaded: the last probe, corrected by what it sent since. */
  residentModels?: string[];
  /** Parallel requests the server showed it takes (running while others waited), where it did. */
  discoveredSlots?: number;
  /** The parallel requests the scheduler allows it, and where that figure came from. */
  slots: number;
  slotsSource: SlotsSource;
}
