/**
 * @module The gateway's entry, for the runtime's two ways of running a server:
 *  - `deno run main.ts` (`deno task start`): the gateway listens itself, on `PORT`/`HOST`, with the bounds of
 *    its own listener (connections in number and in time), and opens the metrics port if configured;
 *  - `deno serve -A main.ts` (or `--parallel`): the default export `{ fetch }` is served by the runtime's
 *    listener, on `--port`/`--host`; in each worker of `--parallel` this module is a whole gateway. Which of
 *    the two it is, the module learns from its command line (lib/server/runtime_serve.ts: hence `-A`).
 * Under the Deploy profile (`DENO_DEPLOY`, or `GATEWAY_PROFILE=deploy`) the runtime serves, always: Deno Deploy
 * serves the default export, and the profile is run locally with `deno serve`, which needs no `-A` then.
 * Either way SIGINT/SIGTERM drains and writes every record before the process exits; so does the end of the
 * command that launched it (`npx … task start`, lib/server/launcher_exit.ts). A start that fails says why in
 * one line naming the setting and its value, and exits 1 (lib/server/startup_failure.ts). Imported by another
 * module, it listens nowhere (not even on the metrics port): the importer serves `fetch`.
 */
import { type Config, loadConfig } from "./lib/config.ts";
import { Gateway } from "./lib/gateway.ts";
import { watchLaunchers } from "./lib/server/launcher_exit.ts";
import { runtimeServe } from "./lib/server/runtime_serve.ts";
import { log, safeLocation } from "./lib/log/mod.ts";
import { failStartup, type StartStep } from "./lib/server/startup_failure.ts";
import { codeVersion } from "./lib/log/version.ts";
import { DEFAULT_KV_PATH } from "./lib/store/kv.ts";
import { warmUpBeforeServing } from "./lib/warm_up/mod.ts";
import { unlessStopped } from "./lib/server/serve_unless_stopped.ts";

/** `work`, or the process ends with the one line saying which setting stopped it at `step`. */
async function step<T>(name: StartStep, work: () => T | Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!import.meta.main) throw error;
    return failStartup(name, error);
  }
}

/** Where the store is, as the start line shows it. */
function storeLocation(config: Config): string {
  if (config.kvPath === undefined && config.profile === "deploy") return "the platform's (Deno.openKv())";
  return safeLocation(config.kvPath, DEFAULT_KV_PATH);
}

const config = await step("configuration", () => loadConfig());
const deploy = config.profile === "deploy";
// The Deploy profile asks nothing of the command line: the runtime serves it, whatever runs it.
const served = import.meta.main && !deploy ? runtimeServe() : undefined;
const listens = import.meta.main && !deploy && served === undefined;
const gateway = await step("store", () => Gateway.open(config));
// Before the warm-up: a signal during it stops the gateway as it would a serving one.
const stop = gateway.stopOnSignals();
// Before the first request can come: through the gateway's own listener, or the runtime's once this module
// has been evaluated (`deno serve`).
const warmed = import.meta.main ? await warmUpBeforeServing(gateway) : undefined;
if (import.meta.main) await unlessStopped(gateway);
let address = deploy ? "served by the runtime (deploy profile)" : "served by the runtime (deno serve)";
if (listens) {
  const { addr } = await step("listen", () => gateway.listen());
  address = `http://${addr.hostname}:${addr.port}`;
}
// Not where the workers of `--parallel` would all want the one port, nor for an importer (nor on Deploy).
if (import.meta.main && !served?.parallel) await step("metrics", () => gateway.serveMetrics());
if (import.meta.main) {
  // Not under the Deploy profile: there the platform ends the process itself. Before the start line: a
  // process manager may stop its command as soon as it reads that line, and a launcher that ends before it was
  // listed could not be noticed.
  const watch = deploy ? undefined : await watchLaunchers(stop);
  const { servers, users } = gateway.deps.view.snapshot;
  log.info("gateway.start", listens ? `listening on ${address}` : address, {
    address,
    store: storeLocation(config),
    profile: config.profile,
    version: codeVersion(),
    deno: Deno.version.deno,
    pid: Deno.pid,
    servers: servers.size,
    users: users.size,
    accessLog: config.accessLog,
    warmUpMs: warmed && Math.round(warmed.ms),
  });
  if (watch) {
    log.debug("gateway.launchers", "stops when any of these launchers ends", {
      parent: watch.parent ? Deno.ppid : undefined,
      launchers: watch.launchers.map((l) => l.pid).join(" ") || undefined,
    });
  }
}

/**
 * What `deno serve` serves. Empty when the gateway listens itself: the runtime takes a default export with
 * `fetch` under `deno run` for a mistake, and says so.
 */
const entry: Deno.ServeDefaultExport | Record<never, never> = listens ? {} : { fetch: gateway.fetch };
export default entry;
