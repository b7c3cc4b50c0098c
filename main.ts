/**
 * @module The gateway's entry, for the runtime's two ways of running a server:
 *  - `deno run main.ts` (`deno task start`): the gateway listens itself, on `PORT`/`HOST`, with the bounds of
 *    its own listener (connections in number and in time), and opens the metrics port if configured;
 *  - `deno serve -A main.ts` (or `--parallel`): the default export `{ fetch }` is served by the runtime's
 *    listener, on `--port`/`--host`; in each worker of `--parallel` this module is a whole gateway. Which of
 *    the two it is, the module learns from its command line (lib/http/runtime_serve.ts: hence `-A`).
 * Under the Deploy profile (`DENO_DEPLOY`, or `GATEWAY_PROFILE=deploy`) the runtime serves, always: Deno Deploy
 * serves the default export, and the profile is run locally with `deno serve`, which needs no `-A` then.
 * Either way SIGINT/SIGTERM drains and writes every record before the process exits. Imported by another
 * module, it listens nowhere (not even on the metrics port): the importer serves `fetch`.
 */
import { loadConfig } from "./lib/config.ts";
import { Gateway } from "./lib/gateway.ts";
import { runtimeServe } from "./lib/http/runtime_serve.ts";

const config = loadConfig();
const deploy = config.profile === "deploy";
// The Deploy profile asks nothing of the command line: the runtime serves it, whatever runs it.
const served = import.meta.main && !deploy ? runtimeServe() : undefined;
const listens = import.meta.main && !deploy && served === undefined;
const gateway = await Gateway.open(config);
if (listens) {
  const { addr } = gateway.listen();
  console.log(`gateway listening on http://${addr.hostname}:${addr.port}`);
}
if (import.meta.main && deploy) console.log("gateway: deploy profile, served by the runtime");
// Not where the workers of `--parallel` would all want the one port, nor for an importer (nor on Deploy).
if (import.meta.main && !served?.parallel) gateway.serveMetrics();
gateway.stopOnSignals();

/**
 * What `deno serve` serves. Empty when the gateway listens itself: the runtime takes a default export with
 * `fetch` under `deno run` for a mistake, and says so.
 */
const entry: Deno.ServeDefaultExport | Record<never, never> = listens ? {} : { fetch: gateway.fetch };
export default entry;
