/**
 * @module The gateway's Prometheus metrics. Request figures are taken from the finished usage record, the
 * one place where status, tokens and timings of a request are final; server figures (health, breaker,
 * in-flight) are read from the live server state when scraped, so they are never stale.
 *
 * Requests only add to plain tallies. prom-client, which formats them, is loaded with the registry at the
 * first scrape: a gateway nobody scrapes does not hold the library (some 9 MB of a process's memory).
 *
 * Each process keeps its own registry: with `deno task start:parallel` every worker answers for itself.
 */
import type { Registry } from "prom-client";
import { type PromClient, Tally } from "./tally.ts";
import { HistogramTally } from "./histogram_tally.ts";
import { connectionMetrics, memoryGauge, serverGauges, storeMetrics } from "./gauges.ts";
import type { StoreStatus } from "../store/link.ts";
import type { UsageRecord } from "../usage/types.ts";
import type { Scheduler, ServerStatus } from "../routing/mod.ts";
import type { ConnectionStats } from "../http/connection_stats.ts";
import type { RequestSpans } from "./request_spans.ts";

/** Seconds; chat answers range from milliseconds (cached, short) to minutes (long generations). */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
const TTFB_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const WAIT_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

const REFUSALS = new Set(["rate_limited", "quota_exceeded", "concurrency_limit"]);

/** Puts a metric into a registry being made: in the order given, which is the order of the scrape. */
type Registration = (prom: PromClient, registry: Registry) => void;

/** The ids of a format's label sets (see `Tally.add`). */
interface FormatIds {
  prompt: string;
  completion: string;
  whole: string;
  stream: string;
  /** A request's id by its outcome, then its HTTP status. */
  outcomes: Map<string, Map<number, string>>;
}

export interface Scrape {
  body: string;
  contentType: string;
}

export class GatewayMetrics {
  readonly #registrations: Registration[] = [];
  #registry?: Promise<{ prom: PromClient; registry: Registry }>;
  readonly #requests = new Tally<"format" | "status" | "outcome">({
    name: "gateway_requests_total",
    help: "Chat requests by client format, HTTP status and outcome (ok, partial, error, rejected).",
    labelNames: ["format", "status", "outcome"],
  });
  readonly #tokens = new Tally<"format" | "type">({
    name: "gateway_tokens_total",
    help: "Tokens billed, by client format and type (prompt or completion); partial streams included.",
    labelNames: ["format", "type"],
  });
  readonly #latency = new HistogramTally<"format" | "stream">(
    "gateway_request_duration_seconds",
    "Whole request duration, from arrival to the last byte.",
    LATENCY_BUCKETS,
  );
  readonly #ttfb = new HistogramTally<"format" | "stream">(
    "gateway_time_to_first_byte_seconds",
    "Time from a request's arrival to the first byte of its answer body.",
    TTFB_BUCKETS,
  );
  readonly #refusals = new Tally<"reason">({
    name: "gateway_limit_refusals_total",
    help: "Requests refused by a key's rate limit, a token quota, or a concurrency limit.",
    labelNames: ["reason"],
  });
  readonly #invalidValues = new Tally<"server" | "field">({
    name: "gateway_backend_invalid_total",
    help: "Values in backends' answers that the wire format does not allow, treated as missing.",
    labelNames: ["server", "field"],
  });
  readonly #adminAuthFailures = new Tally<"via" | "reason">({
    name: "gateway_admin_auth_failures_total",
    help: "Admin token attempts refused, by way in (bearer, form) and reason (wrong_token, or throttled: " +
      "refused unchecked while the address must wait).",
    labelNames: ["via", "reason"],
  });
  readonly #accountingFailures = new Tally<"stage">({
    name: "gateway_accounting_failures_total",
    help: "Requests whose usage record or metrics could not be taken; the response was served anyway.",
    labelNames: ["stage"],
  });

  #spans?: RequestSpans;
  readonly #formatIds = new Map<string, FormatIds>();

  constructor(servers: () => ServerStatus[]) {
    this.#add((prom, registry) => {
      this.#requests.register(prom, registry);
      this.#tokens.register(prom, registry);
      this.#latency.register(registry);
      this.#ttfb.register(registry);
      this.#refusals.register(prom, registry);
      this.#invalidValues.register(prom, registry);
      this.#accountingFailures.register(prom, registry);
      this.#adminAuthFailures.register(prom, registry);
      serverGauges(prom, registry, servers);
      memoryGauge(prom, registry);
    });
  }

  /** Adds metrics to the registry: now if it is made, else when it is. */
  #add(registration: Registration): void {
    if (this.#registry) this.#registry.then(({ prom, registry }) => registration(prom, registry));
    else this.#registrations.push(registration);
  }

  /** The registry, made with every metric at the first call. */
  async registry(): Promise<Registry> {
    this.#registry ??= import("prom-client").then((prom) => {
      const registry = new prom.Registry();
      for (const registration of this.#registrations) registration(prom, registry);
      return { prom, registry };
    });
    return (await this.#registry).registry;
  }

  /** Also sends a span per request (`request_spans.ts`); when the runtime's OpenTelemetry is on. */
  traceRequests(spans: RequestSpans): this {
    this.#spans = spans;
    return this;
  }

  /** A format's label-set ids, each written once: a string made per request is hashed again at each lookup. */
  #idsOf(format: string): FormatIds {
    let ids = this.#formatIds.get(format);
    if (!ids) {
      ids = {
        prompt: `${format} prompt`,
        completion: `${format} completion`,
        whole: format,
        stream: `${format} stream`,
        outcomes: new Map(),
      };
      this.#formatIds.set(format, ids);
    }
    return ids;
  }

  observe(rec: UsageRecord, queueMs?: number): void {
    this.#spans?.(rec, queueMs);
    const format = rec.format;
    const ids = this.#idsOf(format);
    // Outcomes and statuses are few: their ids are kept too.
    let byStatus = ids.outcomes.get(rec.status);
    if (byStatus === undefined) ids.outcomes.set(rec.status, byStatus = new Map());
    let requestId = byStatus.get(rec.httpStatus);
    if (requestId === undefined) {
      byStatus.set(rec.httpStatus, requestId = `${format} ${rec.httpStatus} ${rec.status}`);
    }
    this.#requests.add(requestId, () => ({ format, status: String(rec.httpStatus), outcome: rec.status }));
    // A counter throws on a negative step; records are checked before they get here, this keeps it so.
    if (rec.promptTokens > 0) {
      this.#tokens.add(ids.prompt, () => ({ format, type: "prompt" }), rec.promptTokens);
    }
    if (rec.completionTokens > 0) {
      this.#tokens.add(ids.completion, () => ({ format, type: "completion" }), rec.completionTokens);
    }
    if (rec.status === "rejected") {
      const reason = rec.errorCode;
      if (reason && REFUSALS.has(reason)) this.#refusals.add(reason, () => ({ reason }));
      return;
    }
    const id = rec.stream ? ids.stream : ids.whole;
    const labels = () => ({ format, stream: String(rec.stream) });
    this.#latency.observe(id, labels, rec.latencyMs / 1000);
    if (rec.ttfbMs !== undefined) this.#ttfb.observe(id, labels, rec.ttfbMs / 1000);
  }

  /** Reports the listener's connection figures at each scrape. */
  watchConnections(stats: () => ConnectionStats): void {
    this.#add((prom, registry) => connectionMetrics(prom, registry, stats));
  }

  /** Reports the store's state and round trip, and the usage records waiting for it, at each scrape. */
  watchStore(status: () => StoreStatus, backlog: () => number): this {
    this.#add((prom, registry) => storeMetrics(prom, registry, status, backlog));
    return this;
  }

  invalidBackendValue(server: string, field: string): void {
    this.#invalidValues.add(`${server}\n${field}`, () => ({ server, field }));
  }

  /** A refused attempt at the admin token (`lib/admin_web/failed_logins.ts`). */
  adminAuthFailure(via: "bearer" | "form", reason: "wrong_token" | "throttled"): void {
    this.#adminAuthFailures.add(`${via} ${reason}`, () => ({ via, reason }));
  }

  /** `stage`: "ledger" (the record was not taken) or "metrics" (this object failed to observe it). */
  accountingFailure(stage: "ledger" | "metrics"): void {
    this.#accountingFailures.add(stage, () => ({ stage }));
  }

  /** Queue depth and waits per model, and why requests went where they went. */
  watchRouting(scheduler: Scheduler): this {
    const wait = new HistogramTally<"model">(
      "gateway_queue_wait_seconds",
      "Time requests spent in the wait queue before a server took them (or they timed out), per model.",
      WAIT_BUCKETS,
    );
    const refusals = new Tally<"model" | "reason">({
      name: "gateway_queue_refusals_total",
      help: "Requests that left the wait queue without a server: queue full, wait timed out, or client left.",
      labelNames: ["model", "reason"],
    });
    const routes = new Tally<"reason">({
      name: "gateway_route_decisions_total",
      help: "Why the server that answered was chosen: affinity, loaded, cold, weighted or failover.",
      labelNames: ["reason"],
    });
    this.#add((prom, registry) => {
      queueGauges(prom, registry, scheduler);
      wait.register(registry);
      refusals.register(prom, registry);
      routes.register(prom, registry);
    });
    scheduler.observer = {
      routed: (reason) => routes.add(reason, () => ({ reason })),
      waited: (model, ms) => wait.observe(model, () => ({ model }), ms / 1000),
      refused: (model, reason) => refusals.add(`${model}\n${reason}`, () => ({ model, reason })),
    };
    return this;
  }

  /** The exposition text, and the content type it is served with. */
  async scrape(): Promise<Scrape> {
    const registry = await this.registry();
    return { body: await registry.metrics(), contentType: registry.contentType };
  }
}

function queueGauges(prom: PromClient, registry: Registry, scheduler: Scheduler): void {
  const registers = [registry];
  new prom.Gauge({
    name: "gateway_queue_depth",
    help: "Requests waiting at the gateway for a free server slot, per model.",
    labelNames: ["model"],
    registers,
    collect() {
      this.reset();
      for (const f of scheduler.figures()) this.set({ model: f.model }, f.depth);
    },
  });
  new prom.Gauge({
    name: "gateway_queue_oldest_wait_seconds",
    help: "How long the longest-waiting request of each model has waited so far.",
    labelNames: ["model"],
    registers,
    collect() {
      this.reset();
      for (const f of scheduler.figures()) this.set({ model: f.model }, f.oldestWaitMs / 1000);
    },
  });
}
