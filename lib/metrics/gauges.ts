/**
 * @module The gauges and counters read from live state when scraped (servers, the listener's connections,
 * the process's memory): they hold nothing between scrapes, so they are made with the registry.
 */
import type { Registry } from "prom-client";
import type { ServerStatus } from "../routing/mod.ts";
import type { ConnectionStats } from "../http/connection_stats.ts";
import type { PromClient } from "./tally.ts";
import type { StoreStatus } from "../store/link.ts";

const BREAKER_STATES = ["closed", "half-open", "open"] as const;

export function memoryGauge(prom: PromClient, registry: Registry): void {
  new prom.Gauge({
    name: "gateway_resident_memory_bytes",
    help: "Resident set size of this gateway process.",
    registers: [registry],
    collect() {
      this.set(Deno.memoryUsage().rss);
    },
  });
}

export function serverGauges(prom: PromClient, registry: Registry, servers: () => ServerStatus[]): void {
  const registers = [registry];
  new prom.Gauge({
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
  new prom.Gauge({
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
  new prom.Gauge({
    name: "gateway_server_slots",
    help: "Requests the scheduler lets each server run at once, by where the figure came from: declared " +
      "(--slots), discovered (the server showed it) or learned (from its answers).",
    labelNames: ["server", "source"],
    registers,
    collect() {
      this.reset();
      for (const s of servers()) this.set({ server: s.name, source: s.slotsSource }, s.slots);
    },
  });
  new prom.Gauge({
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

export function connectionMetrics(prom: PromClient, registry: Registry, stats: () => ConnectionStats): void {
  const registers = [registry];
  new prom.Gauge({
    name: "gateway_connections_open",
    help: "Client connections open now.",
    registers,
    collect() {
      this.set(stats().open);
    },
  });
  new prom.Gauge({
    name: "gateway_connections_limit",
    help: "Client connections taken at most; more wait to be accepted.",
    registers,
    collect() {
      this.set(stats().limit);
    },
  });
  // Counters the listener keeps itself; set at each scrape, they only ever grow.
  new prom.Counter({
    name: "gateway_connection_waits_total",
    help: "Times accepting paused because the connection limit was reached.",
    registers,
    collect() {
      this.reset();
      this.inc(stats().waitsAtLimit);
    },
  });
  new prom.Counter({
    name: "gateway_accept_failures_total",
    help: "Connections the gateway could not accept (out of file descriptors, most often).",
    registers,
    collect() {
      this.reset();
      this.inc(stats().acceptFailures);
    },
  });
  new prom.Counter({
    name: "gateway_connections_closed_total",
    help:
      "Connections the gateway closed: request head too slow (head), idle too long (idle), or over the open connections of one address (address).",
    labelNames: ["reason"],
    registers,
    collect() {
      const { closed } = stats();
      this.reset();
      this.inc({ reason: "head" }, closed.head);
      this.inc({ reason: "idle" }, closed.idle);
      this.inc({ reason: "address" }, closed.address);
    },
  });
}

/** The store as the gateway's link sees it, and the usage records waiting for it. */
export function storeMetrics(
  prom: PromClient,
  registry: Registry,
  status: () => StoreStatus,
  backlog: () => number,
): void {
  const registers = [registry];
  new prom.Gauge({
    name: "gateway_store_up",
    help: "1 while the store answers, 0 while a network store is taken for down (no answer in time).",
    registers,
    collect() {
      this.set(status().state === "up" ? 1 : 0);
    },
  });
  new prom.Gauge({
    name: "gateway_store_round_trip_seconds",
    help: "Round trip of the last probe of the store (a read of its generation, several times a second).",
    registers,
    collect() {
      const ms = status().roundTripMs;
      if (ms === undefined) this.reset();
      else this.set(ms / 1000);
    },
  });
  new prom.Counter({
    name: "gateway_store_outages_total",
    help: "Times the store was taken for down since the gateway started.",
    registers,
    collect() {
      this.reset();
      this.inc(status().outages);
    },
  });
  new prom.Gauge({
    name: "gateway_usage_backlog_records",
    help: "Usage records queued and not yet written to the store.",
    registers,
    collect() {
      this.set(backlog());
    },
  });
}
