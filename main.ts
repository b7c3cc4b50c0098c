/**
 * @module The gateway's entry, for the runtime's two ways of running a server:
 *  - `deno run main.ts` (`deno task start`): the gateway listens itself, on `PORT`/`HOST`, with the bounds of
 *    its own listener (connections in number and in time), and opens the metrics port if configured;
 *  - `deno serve -A main.ts` (or `--parallel`): the default export `{ fetch }` is served by the runtime's
 *    listener, on `--port`/`--host`; in each worker of `--parallel` this module is a whole gateway. Which of
 *    the two it is, the module learns from its command line (lib/http/runtime_serve.ts: hence `-A`).
 * Either way SIGINT/SIGTERM drains and writes every record before the process exits. Imported by another
 * module, it listens nowhere (not even on the metrics port): the importer serves `fetch`.
 */
import { loadConfig } from "./lib/config.ts";
import { Gateway } from "./lib/gateway.ts";
import { runtimeServe } from "./lib/http/runtime_serve.ts";

const served = import.meta.main ? runtimeServe() : undefined;
const listens = import.meta.main && served === undefined;
const gateway = await Gateway.open(loadConfig());
if (listens) {
  const { addr } = gateway.listen();
  console.log(`gateway listening on http://${addr.hostname}:${addr.port}`);
}
// Not where the workers of `--parallel` would all want the one port, nor for an importer.
if (import.meta.main && !served?.parallel) gateway.serveMetrics();
gateway.stopOnSignals();

/**
 * What `deno serve` serves. Empty when the gateway listens itself: the runtime takes a default export with
 * `fetch` under `deno run` for a mistake, and says so.
 */
const entry: Deno.ServeDefaultExport | Record<never, never> = listens ? {} : { fetch: gateway.fetch };
export default entry;
