/**
 * @module The gateway's Prometheus metrics. Request figures are taken from the finished usage record, the
 * one place where status, tokens and timings of a request are final; server figures (health, breaker,
 * in-flight) are read from the live server state when scraped, so they are never stale.
 *
 * Each process keeps its own registry: with `deno task start:parallel` every worker answers for itself.
 */
import { Counter, Gauge, Registry } from "prom-client";
import { Tally } from "./tally.ts";
import { HistogramTally } from "./histogram_tally.ts";
import type { UsageRecord } from "../usage/types.ts";
import type { Scheduler, ServerStatus } from "../routing/mod.ts";
import type { ConnectionStats } from "../http/listener.ts";

/** Seconds; chat answers range from milliseconds (cached, short) to minutes (long generations). */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
const TTFB_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

const BREAKER_STATES = ["closed", "half-open", "open"] as const;
const REFUSALS = new Set(["rate_limited", "quota_exceeded"]);

export class GatewayMetrics {
  readonly registry = new Registry();
  readonly #requests: Tally<"format" | "status" | "outcome">;
  readonly #tokens: Tally<"format" | "type">;
  readonly #latency: HistogramTally<"format" | "stream">;
  readonly #ttfb: HistogramTally<"format" | "stream">;
  readonly #refusals: Counter<"reason">;
  readonly #invalidValues: Counter<"server" | "field">;
  readonly #accountingFailures: Counter<"stage">;

  constructor(servers: () => ServerStatus[]) {
    const registers = [this.registry];
    this.#requests = new Tally({
      name: "gateway_requests_total",
      help: "Chat requests by client format, HTTP status and outcome (ok, partial, error, rejected).",
      labelNames: ["format", "status", "outcome"],
      registers,
    });
    this.#tokens = new Tally({
      name: "gateway_tokens_total",
      help: "Tokens billed, by client format and type (prompt or completion); partial streams included.",
      labelNames: ["format", "type"],
      registers,
    });
    this.#latency = new HistogramTally(
      "gateway_request_duration_seconds",
      "Whole request duration, from arrival to the last byte.",
      LATENCY_BUCKETS,
      registers,
    );
    this.#ttfb = new HistogramTally(
      "gateway_time_to_first_byte_seconds",
      "Time from a request's arrival to the first byte of its answer body.",
      TTFB_BUCKETS,
      registers,
    );
    this.#refusals = new Counter({
      name: "gateway_limit_refusals_total",
      help: "Requests refused by a key's rate limit or a token quota.",
      labelNames: ["reason"],
      registers,
    });
    this.#invalidValues = new Counter({
      name: "gateway_backend_invalid_total",
      help: "Values in backends' answers that the wire format does not allow, treated as missing.",
      labelNames: ["server", "field"],
      registers,
    });
    this.#accountingFailures = new Counter({
      name: "gateway_accounting_failures_total",
      help: "Requests whose usage record or metrics could not be taken; the response was served anyway.",
      labelNames: ["stage"],
      registers,
    });
    serverGauges(registers, servers);
    new Gauge({
      name: "gateway_resident_memory_bytes",
      help: "Resident set size of this gateway process.",
      registers,
      collect() {
        this.set(Deno.memoryUsage().rss);
      },
    });
  }

  observe(rec: UsageRecord): void {
    const format = rec.format;
    this.#requests.add(
      `${format} ${rec.httpStatus} ${rec.status}`,
      () => ({ format, status: String(rec.httpStatus), outcome: rec.status }),
    );
    // A counter throws on a negative step; records are checked before they get here, this keeps it so.
    if (rec.promptTokens > 0) {
      this.#tokens.add(`${format} prompt`, () => ({ format, type: "prompt" }), rec.promptTokens);
    }
    if (rec.completionTokens > 0) {
      this.#tokens.add(`${format} completion`, () => ({ format, type: "completion" }), rec.completionTokens);
    }
    if (rec.status === "rejected") {
      if (rec.errorCode && REFUSALS.has(rec.errorCode)) this.#refusals.inc({ reason: rec.errorCode });
      return;
    }
    const id = rec.stream ? `${format} stream` : format;
    const labels = () => ({ format, stream: String(rec.stream) });
    this.#latency.observe(id, labels, rec.latencyMs / 1000);
    if (rec.ttfbMs !== undefined) this.#ttfb.observe(id, labels, rec.ttfbMs / 1000);
  }

  /** Reports the listener's connection figures at each scrape. */
  watchConnections(stats: () => ConnectionStats): void {
    connectionMetrics([this.registry], stats);
  }

  invalidBackendValue(server: string, field: string): void {
    this.#invalidValues.inc({ server, field });
  }

  /** `stage`: "ledger" (the record was not taken) or "metrics" (this object failed to observe it). */
  accountingFailure(stage: "ledger" | "metrics"): void {
    this.#accountingFailures.inc({ stage });
  }

  /** Queue depth and waits per model, and why requests went where they went. */
  watchRouting(scheduler: Scheduler): this {
    routingMetrics([this.registry], scheduler);
    return this;
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

function serverGauges(registers: Registry[], servers: () => ServerStatus[]): void {
  new Gauge({
    name: "gateway_server_up",
    help: "1 when the server's last health check passed, 0 when it failed (absent before the first).",
    labelNames: ["server"],
    registers,
    collect() {
      this.reset();
      for (const s of servers()) {
        if (s.health !== "unknown") this.set({ server: s.name }, s.health === "up" ? 1 : 0);
      }
    },
  });
  new Gauge({
    name: "gateway_breaker_state",
    help: "1 for the state each server's circuit breaker is in (closed, half-open or open), else 0.",
    labelNames: ["server", "state"],
    registers,
    collect() {
      this.reset();
      for (const s of servers()) {
        for (const state of BREAKER_STATES) this.set({ server: s.name, state }, s.breaker === state ? 1 : 0);
      }
    },
  });
  new Gauge({
    name: "gateway_server_in_flight",
    help: "Requests each server is answering now.",
    labelNames: ["server"],
    registers,
    collect() {
      this.reset();
      for (const s of servers()) this.set({ server: s.name }, s.inFlight);
    },
  });
}

function connectionMetrics(registers: Registry[], stats: () => ConnectionStats): void {
  new Gauge({
    name: "gateway_connections_open",
    help: "Client connections open now.",
    registers,
    collect() {
      this.set(stats().open);
    },
  });
  new Gauge({
    name: "gateway_connections_limit",
    help: "Client connections taken at most; more wait to be accepted.",
    registers,
    collect() {
      this.set(stats().limit);
    },
  });
  // Counters the listener keeps itself; set at each scrape, they only ever grow.
  new Counter({
    name: "gateway_connection_waits_total",
    help: "Times accepting paused because the connection limit was reached.",
    registers,
    collect() {
      this.reset();
      this.inc(stats().waitsAtLimit);
    },
  });
  new Counter({
    name: "gateway_accept_failures_total",
    help: "Connections the gateway could not accept (out of file descriptors, most often).",
    registers,
    collect() {
      this.reset();
      this.inc(stats().acceptFailures);
    },
  });
  new Counter({
    name: "gateway_connections_closed_total",
    help: "Connections the gateway closed: request head too slow (head) or idle too long (idle).",
    labelNames: ["reason"],
    registers,
    collect() {
      const { closed } = stats();
      this.reset();
      this.inc({ reason: "head" }, closed.head);
      this.inc({ reason: "idle" }, closed.idle);
    },
  });
}

const WAIT_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

function routingMetrics(registers: Registry[], scheduler: Scheduler): void {
  new Gauge({
    name: "gateway_queue_depth",
    help: "Requests waiting at the gateway for a free server slot, per model.",
    labelNames: ["model"],
    registers,
    collect() {
      this.reset();
      for (const f of scheduler.figures()) this.set({ model: f.model }, f.depth);
    },
  });
  new Gauge({
    name: "gateway_queue_oldest_wait_seconds",
    help: "How long the longest-waiting request of each model has waited so far.",
    labelNames: ["model"],
    registers,
    collect() {
      this.reset();
      for (const f of scheduler.figures()) this.set({ model: f.model }, f.oldestWaitMs / 1000);
    },
  });
  const wait = new HistogramTally<"model">(
    "gateway_queue_wait_seconds",
    "Time requests spent in the wait queue before a server took them (or they timed out), per model.",
    WAIT_BUCKETS,
    registers,
  );
  const refusals = new Counter({
    name: "gateway_queue_refusals_total",
    help: "Requests that left the wait queue without a server: queue full, wait timed out, or client left.",
    labelNames: ["model", "reason"],
    registers,
  });
  const routes = new Tally({
    name: "gateway_route_decisions_total",
    help: "Why the server that answered was chosen: affinity, loaded, cold, weighted or failover.",
    labelNames: ["reason"],
    registers,
  });
  scheduler.observer = {
    routed: (reason) => routes.add(reason, () => ({ reason })),
    waited: (model, ms) => wait.observe(model, () => ({ model }), ms / 1000),
    refused: (model, reason) => refusals.inc({ model, reason }),
  };
}
