/**
 * @module Starting the gateway, one wiring for every way it runs: configuration → store → services → app, with
 * every request going through the drain. `deno task start` serves it on the gateway's own listener, each
 * worker of `start:parallel` likewise on the port they share, `deno serve` through the runtime's listener
 * (`fetch`), and the tests in process on a store of their own. Stopping is the same everywhere: stop
 * listening, let what runs finish (or end it), write what is pending, close the store.
 *
 * What differs by where it runs is chosen by the caller: whether it listens itself, whether it opens the
 * metrics port (not where workers would share it, nor where a platform gives one port), and which store
 * (`kv`: any open `Deno.Kv`; by default the configured one).
 *
 * The Deploy profile (`config.profile`, lib/config.ts) keeps to what Deno Deploy offers: the store is the one
 * `Deno.openKv()` gives without a path (or a KV Connect URL), the runtime's listener serves `fetch`, and the
 * gateway neither listens itself (its listener needs the runtime's internal API, and Deploy routes only the
 * runtime's) nor opens the metrics port (/metrics stays on the one port, behind the admin token), writes no
 * file and starts no worker.
 */
import type { Config } from "./config.ts";
import { closeDeps, createDeps, type Deps, type DepsOptions, type GatewayDeps } from "./deps.ts";
import { newClient } from "./http/client.ts";
import { buildApp } from "./server/app.ts";
import { Drain } from "./server/drain.ts";
import type { Listening } from "./server/listener.ts";
import { serveMetrics } from "./server/metrics_server.ts";
import { closeAdminServices } from "./admin_web/services.ts";
import { closeIdleConnections } from "./backends/upstream.ts";
import { type GatewayAddress, listenForGateway } from "./server/serve.ts";
import { coordinateShutdown, type StopProcess } from "./server/worker_shutdown.ts";
import { logRequest } from "./server/access_log.ts";
import { log } from "./log/mod.ts";
import { RequestSummary } from "./server/request_summary.ts";
import { openPlatformStore, openStore } from "./store/kv.ts";
import type { UsageLedger } from "./usage/mod.ts";
import type { UsageRecord } from "./usage/types.ts";
import { manifest } from "../routes.gen.ts";

export interface GatewayOptions extends DepsOptions {
  /** An open store, left open at stop (the tests': in memory); by default the configured one, closed at stop. */
  kv?: Deno.Kv;
  /** Sees each usage record as it is reported, before the ledger takes it (the tests keep them). */
  onRecord?: (record: UsageRecord) => void;
}

/** Time for the last commits after the grace period and the cut, before a stop counts as hung. */
const LAST_WRITES_MS = 15_000;

/** The peer's address, where the runtime's listener serves TCP (a Unix socket has none). */
function peerAddress(addr: Deno.Addr): string | undefined {
  return "hostname" in addr ? addr.hostname : undefined;
}

export class Gateway {
  readonly drain: Drain;
  readonly #app: ReturnType<typeof buildApp>;
  readonly #listening: Listening[] = [];
  readonly #summary: RequestSummary;
  #metrics?: Listening;
  #stopped?: Promise<void>;

  private constructor(
    readonly config: Config,
    readonly kv: Deno.Kv,
    /** What the app runs on. */
    readonly deps: Deps,
    /** The same services with the ledger itself, which closing flushes. */
    readonly services: GatewayDeps,
    private readonly ownsStore: boolean,
    summary: RequestSummary,
  ) {
    this.#summary = summary;
    this.drain = new Drain({
      graceMs: config.shutdownGraceMs,
      streams: services.streams,
      log: (line) => log.info("gateway.draining", line.replace(/^gateway: /, "")),
    });
    this.#app = buildApp(deps, manifest);
  }

  static async open(config: Config, options: GatewayOptions = {}): Promise<Gateway> {
    log.configure({ level: config.logLevel, format: config.logFormat });
    // A store named in GATEWAY_KV whose folder is missing is a mistyped path, refused rather than made empty.
    const kv = options.kv ??
      await (config.profile === "deploy" && config.kvPath === undefined
        ? openPlatformStore()
        : openStore(config.kvPath, { folderMustExist: config.kvPath !== undefined }));
    let services: GatewayDeps;
    try {
      services = await createDeps(config, kv, options);
    } catch (error) {
      if (!options.kv) kv.close();
      throw error;
    }
    const { onRecord } = options;
    const ledger = services.usage;
    const summary = new RequestSummary();
    const see = summary.see;
    // Chosen once here: with the access log off, a request pays for the summary's one comparison only.
    const access = config.accessLog ? logRequest : undefined;
    const deps: Deps = {
      ...services,
      usage: {
        record: (record) => {
          onRecord?.(record);
          see(record);
          access?.(record);
          ledger.record(record);
        },
      },
    };
    return new Gateway(config, kv, deps, services, !options.kv, summary);
  }

  /** Where usage records are written, with their counters. */
  get ledger(): UsageLedger {
    return this.services.usage;
  }

  /**
   * The handler for the runtime's listener (`deno serve`): each request through the drain, as on the
   * gateway's own listener, so a stop lets it finish and its record is written.
   */
  readonly fetch = (request: Request, info: Deno.ServeHandlerInfo): Response | Promise<Response> =>
    this.drain.handle(
      request,
      info.completed,
      (cut) => this.#app.fetch(request, newClient(cut, peerAddress(info.remoteAddr))),
    );

  /**
   * Serves on the gateway's own listener, with its bounds; its connection figures go to /metrics. Not under
   * the Deploy profile, where the runtime serves `fetch`.
   */
  listen(address: Partial<GatewayAddress> = {}): Listening {
    if (this.config.profile === "deploy") {
      throw new Error("The deploy profile does not listen itself: the runtime serves `fetch` (deno serve)");
    }
    const listening = listenForGateway(this.#app, this.config, this.drain, {
      hostname: this.config.host,
      port: this.config.port,
      ...address,
    });
    this.#listening.push(listening);
    if (listening.stats) this.deps.metrics?.watchConnections(listening.stats);
    return listening;
  }

  /** Also serves /metrics without the token on `GATEWAY_METRICS_PORT`, if that is set; never under Deploy. */
  serveMetrics(): void {
    if (this.config.profile === "deploy") return;
    this.#metrics ??= serveMetrics(this.deps);
  }

  /**
   * Stops listening, lets running requests and streams finish within the grace period and then ends them,
   * writes every pending record, and closes the store if it opened it. Rejects if the records could not be
   * written. Once: later calls get the same promise.
   */
  stop(): Promise<void> {
    return this.#stopped ??= this.#stop();
  }

  /** Whether `stop` was called (by a signal, or by what stops the process as one would). */
  get stopping(): boolean {
    return this.#stopped !== undefined;
  }

  async #stop(): Promise<void> {
    for (const listening of this.#listening) listening.close();
    await this.drain.stop();
    for (const listening of this.#listening) listening.closeIdle?.();
    // Every call has ended: the backend connections left are idle ones.
    closeIdleConnections();
    // Scrapes go on during the drain; the figures are final now.
    this.#metrics?.close();
    this.#summary.close();
    log.flush();
    try {
      await closeAdminServices(this.deps).catch((error) => console.error("gateway: admin:", error));
      await closeDeps(this.services);
    } finally {
      if (this.ownsStore) this.kv.close();
    }
  }

  /**
   * Stops on SIGINT or SIGTERM and exits once every gateway of the process has (the workers of
   * `start:parallel` and of `deno serve --parallel` are gateways of one process); a second signal ends what
   * still runs at once. Exits 1 if records could not be written, or if a stop hangs.
   */
  stopOnSignals(exit?: (code: number) => void): StopProcess {
    return coordinateShutdown({
      exit,
      drainAndFlush: async (reason) => {
        const running = this.drain.inFlight;
        log.info("gateway.stopping", `stopping (${reason})`, { reason, running });
        const started = performance.now();
        await this.stop();
        log.info("gateway.stopped", "stopped: every usage record written", {
          ms: Math.round(performance.now() - started),
        });
      },
      hurry: () => this.drain.hurry(),
      hangMs: this.config.shutdownGraceMs + LAST_WRITES_MS,
    });
  }
}
