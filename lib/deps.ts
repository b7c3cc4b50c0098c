/**
 * @module The services every stage receives explicitly, so tests can swap the clock, the random source,
 * the store and the network.
 */
import type { Config } from "./config.ts";
import { StoreView } from "./store/view.ts";
import { isNetworkStore, StoreLink } from "./store/link.ts";
import type { UsageSink } from "./usage/types.ts";
import { UsageLedger } from "./usage/mod.ts";
import { LiveTotals } from "./usage/live_totals.ts";
import { RetentionRunner } from "./usage/retention_runner.ts";
import type { RetentionReport } from "./usage/retention.ts";
import { log } from "./log/mod.ts";
import { Policy } from "./policy/mod.ts";
import {
  HealthProber,
  LoopLag,
  type RoutingPolicy,
  Scheduler,
  ServerState,
  type SharedLoad,
} from "./routing/mod.ts";
import { Reachability } from "./backends/reachability.ts";
import { GatewayMetrics } from "./metrics/mod.ts";
import { OpenStreams } from "./http/stream_response.ts";
import {
  keylessNotice,
  SLOW_STORE_MS,
  storeChanged,
  storeSlow,
  usageWriteFailed,
} from "./log/store_events.ts";
import { requestSpans } from "./metrics/request_spans.ts";

export interface Deps {
  config: Config;
  view: StoreView;
  /** Milliseconds since the epoch. */
  now: () => number;
  /** Uniform in [0, 1); drives weighted server selection. */
  random: () => number;
  /** Receives one usage record per request. */
  usage: UsageSink;
  policy: Policy;
  /** Live state of every server: health, breaker, load. */
  servers: ServerState;
  /** Ranks candidates and holds requests while every server is busy. */
  scheduler: Scheduler;
  /** Which servers answered lately (the connect-timeout check). */
  reach: Reachability;
  /** Probes the servers in the background; absent where nothing probes (some tests). */
  prober?: HealthProber;
  /** Prometheus figures; absent where nothing scrapes (some tests and benches). */
  metrics?: GatewayMetrics;
  /**
   * The streams this gateway is sending, which its drain ends when it stops; absent: the isolate's. Several
   * gateways in one isolate (the tests) each need their own, or one stopping would end the others' streams.
   */
  streams?: OpenStreams;
}

/** The running gateway's services, with what must be closed (and flushed) on shutdown. */
export interface GatewayDeps extends Deps {
  usage: UsageLedger;
  retention: RetentionRunner;
}

function retentionPassed(report: RetentionReport, ms: number): void {
  log.info(
    "usage.rolled_up",
    `usage retention: ${report.records} record(s) in ${report.rows} row(s) rolled up into days, ${
      Math.round(ms)
    } ms`,
    { rows: report.rows, records: report.records, steps: report.steps, ms: Math.round(ms) },
  );
}

/**
 * The ledger and the policy share the live token totals: what one writes, the other checks. Both learn from
 * the view's link whether the store is across a network and answering.
 */
export function meteredServices(kv: Deno.Kv, config: Config, view: StoreView, onError: (e: unknown) => void) {
  const totals = new LiveTotals(kv);
  const link = view.link;
  const usage = new UsageLedger(kv, {
    onError,
    observer: totals,
    keylessPerMinute: config.keylessRecordsPerMinute,
    onNotice: keylessNotice,
    // Deno's client waits for an unreachable network store forever; a stop does not.
    closeWaitMs: link.remote ? 3 * config.storeTimeoutMs : undefined,
  });
  const policy = new Policy({
    kv,
    trustProxy: config.trustProxy,
    totals,
    users: () => view.snapshot.users,
    ledger: usage,
    defaultOutput: config.quotaOutputTokens,
    leaseMs: config.holdLeaseMs,
    link,
    outage: { mode: config.storeOutage, rpm: config.storeOutageRpm },
    backlog: usage,
  });
  return { usage, policy };
}

/** Live server state with the configured breaker, and its prober (not started). */
export function routingServices(
  config: Config,
  view: StoreView,
  fetcher: typeof fetch,
  now = Date.now,
  random = Math.random,
  { shared, routing: policy = "scheduled", quietProbes }: Pick<
    DepsOptions,
    "shared" | "routing" | "quietProbes"
  > = {},
) {
  const servers = new ServerState({
    now,
    breaker: {
      failureThreshold: config.breakerFailures,
      openMs: config.breakerOpenMs,
      trialLeaseMs: config.firstByteTimeoutMs,
    },
    declaredSlots: (name) => view.snapshot.servers.get(name)?.slots,
    learning: config.defaultSlots === undefined ? undefined : { start: config.defaultSlots },
    shared,
    // Only on the real clock: a test's clock stands still while the loop runs.
    loopLag: now === Date.now ? new LoopLag(now) : undefined,
  });
  const prober = new HealthProber({
    fetch: fetcher,
    servers: () => [...view.snapshot.servers.values()],
    state: servers,
    intervalMs: config.probeIntervalMs,
    timeoutMs: config.probeTimeoutMs,
    now,
    logChanges: !quietProbes,
  });
  const scheduler = new Scheduler({
    state: servers,
    now,
    random,
    policy,
    maxWaitMs: config.queueWaitMs,
    maxQueue: config.queueMax,
    priorityStepMs: config.queuePriorityStepMs,
    affinityTtlMs: config.affinityTtlMs,
    shareWindowMs: config.shareWindowMs,
  });
  return { servers, prober, scheduler, reach: new Reachability() };
}

export interface DepsOptions {
  /** The servers' load over every worker of the process, for a worker of `start:parallel`. */
  shared?: SharedLoad;
  /** The clock and the random source (tests set them). */
  now?: () => number;
  random?: () => number;
  /** Health-check the servers in the background (the default); tests that probe by hand turn it off. */
  probe?: boolean;
  /** The probes log no server going up or down: the warm-up's own gateway, whose servers are its own. */
  quietProbes?: boolean;
  /**
   * `weighted`: the plain weighted draw, no slots and no queue, as the gateway routed before scheduling. Not an
   * operator's setting: only the routing bench asks for it, to compare the scheduler with it on one workload.
   */
  routing?: RoutingPolicy;
}

export async function createDeps(
  config: Config,
  kv: Deno.Kv,
  options: DepsOptions = {},
): Promise<GatewayDeps> {
  const { now = Date.now, random = Math.random } = options;
  const remote = isNetworkStore(config.kvPath, config.profile === "deploy");
  const link = new StoreLink({
    remote,
    timeoutMs: config.storeTimeoutMs,
    onChange: storeChanged,
    slowMs: SLOW_STORE_MS,
    onSlow: storeSlow,
  });
  const view = await StoreView.open(kv, config.reloadIntervalMs, now, link);
  const routing = routingServices(config, view, globalThis.fetch, now, random, options);
  if (options.probe ?? true) routing.prober.start();
  const metered = meteredServices(kv, config, view, usageWriteFailed);
  const metrics = new GatewayMetrics(() => routing.servers.status()).watchRouting(routing.scheduler);
  if (config.traces) metrics.traceRequests(requestSpans());
  const retention = new RetentionRunner(kv, {
    days: config.usageRetentionDays,
    everyMs: config.usageRetentionEveryMs,
    onPass: retentionPassed,
  }).start();
  return {
    retention,
    config,
    view,
    now,
    random,
    ...routing,
    metrics: metrics.watchStore(() => link.status(), () => metered.usage.backlog),
    streams: new OpenStreams(),
    ...metered,
  };
}

/** Stops background work and writes what is pending; the store can be closed afterwards. */
export async function closeDeps(deps: GatewayDeps): Promise<void> {
  await deps.retention.stop();
  deps.view.close();
  deps.scheduler.close();
  deps.servers.close();
  await deps.prober?.stop();
  // The ledger's last flush first: then the policy's holdings in the store have no billed tokens left to keep.
  // Given up on (a store that stopped answering), the holdings are taken out all the same.
  try {
    if (deps.usage instanceof UsageLedger) await deps.usage.close();
  } finally {
    await deps.policy.close();
  }
}
