/**
 * @module One server's live state as the server state keeps it (`Entry`), and one request in flight there
 * (`Admission`, the ticket): what a probe changes, what an answered request teaches about the server's slots,
 * and the status the admin page and metrics read. The server state decides when; this holds and reports.
 */
import type { Breaker, Pass } from "./breaker.ts";
import { canonicalModel } from "./canonical_model.ts";
import type { LearnedSlots } from "./learned_slots.ts";
import type { LatencyRing } from "./load_window.ts";
import { MinuteCounts } from "./load_window.ts";
import type { ModelFacts } from "./model_facts.ts";
import { Residency } from "./residency.ts";
import type { Health, ProbeResult, ServerStatus, SlotsSource } from "./server_status.ts";
import type { SharedLoad } from "./shared_load.ts";
import type { Tenant } from "./tenants.ts";

/** One request in flight on one server; hand it back to `answered` / `finish`. */
export interface Ticket {
  readonly server: string;
}

export class Entry {
  health: Health = "unknown";
  inFlight = 0;
  readonly counts = new MinuteCounts();
  lastProbeAt?: number;
  lastProbeMs?: number;
  lastProbeError?: string;
  version?: string;
  models?: string[];
  carried?: Set<string>;
  loaded?: string[];
  /** By canonical model name. */
  facts?: Map<string, ModelFacts>;
  reserved = 0;
  discoveredSlots?: number;
  /** Requests ended there, ever: a request that ends while another waits for its first byte may have freed its slot. */
  ended = 0;
  /** When this process last saw a request end there. */
  lastEndedAt = -Infinity;
  /** Streamed requests past their first byte, not ended: the ones the server is running for sure. */
  streaming = 0;
  readonly residency = new Residency();
  /** Requests in flight per model. */
  readonly active = new Map<string, number>();

  constructor(
    readonly name: string,
    readonly breaker: Breaker,
    readonly latency: LatencyRing,
    readonly learned: LearnedSlots,
  ) {}

  probed(result: ProbeResult, now: number): void {
    this.lastProbeAt = now;
    this.lastProbeMs = result.durationMs;
    if (result.ok) {
      this.health = "up";
      this.lastProbeError = undefined;
      this.version = result.version;
      this.models = result.models && [...result.models];
      this.carried = result.models && new Set(result.models.map(canonicalModel));
      this.loaded = result.loaded && [...result.loaded];
      this.facts = result.facts && new Map([...result.facts].map(([name, f]) => [canonicalModel(name), f]));
      if (result.loaded) this.residency.probed(result.loaded, (m) => (this.active.get(m) ?? 0) > 0);
      // A server that keeps requests waiting while running N shows that N is all it runs at once.
      if (result.waiting && result.running) this.discoveredSlots = result.running;
      this.breaker.probePassed();
    } else {
      this.health = "down";
      this.lastProbeError = result.error ?? "probe failed";
      this.breaker.probeFailed();
    }
  }

  /**
   * What request `t`, answered now (its first byte, or whole), tells about the server's slots; `pausedMs`
   * says how much of its wait the gateway's own loop was held up.
   */
  learn(
    t: Admission,
    now: number,
    shared: SharedLoad | undefined,
    streaming?: number,
    pausedMs?: () => number,
  ): void {
    const { learned } = this;
    if (shared) learned.adopt(shared.learned(t.server));
    if (streaming !== undefined) learned.sawRunning(streaming, now);
    learned.observe({
      level: t.level,
      ms: now - t.startedAt,
      othersEnded: (shared ? shared.ended(t.server) : this.ended) > t.endedBefore,
      sinceEndMs: this.lastEndedAt > t.startedAt ? now - this.lastEndedAt : undefined,
      warm: t.warm,
      streaming,
      pausedMs,
    }, now);
    shared?.setLearned(t.server, learned.limit);
  }

  status(now: number, slots: { slots: number; slotsSource: SlotsSource }): ServerStatus {
    const { requests, errors } = this.counts.sum(now);
    const latency = this.latency.percentiles(now);
    return {
      name: this.name,
      health: this.health,
      breaker: this.breaker.state,
      consecutiveFailures: this.breaker.failures,
      inFlight: this.inFlight,
      requestsLastMinute: requests,
      errorsLastMinute: errors,
      latencySamples: latency.n,
      latencyP50Ms: latency.p50,
      latencyP95Ms: latency.p95,
      lastProbeAt: this.lastProbeAt,
      lastProbeMs: this.lastProbeMs,
      lastProbeError: this.lastProbeError,
      version: this.version,
      models: this.models && [...this.models],
      loadedModels: this.loaded && [...this.loaded],
      reserved: this.reserved,
      residentModels: this.residency.list(),
      discoveredSlots: this.discoveredSlots,
      ...slots,
    };
  }
}

/** One request in flight on one server, as the server state's ticket. */
export class Admission implements Ticket {
  answered = false;
  done = false;
  constructor(
    readonly server: string,
    readonly entry: Entry,
    readonly startedAt: number,
    readonly pass: Pass,
    readonly model: string | undefined,
    /** In flight there when it began, itself included; what had ended there by then; the model loaded then. */
    readonly level: number,
    readonly endedBefore: number,
    readonly warm: boolean,
    readonly tenant: Tenant | undefined,
  ) {}
}
