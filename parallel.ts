/**
 * The gateway for `deno serve --parallel` (`deno task start:parallel`): one isolate per core, each with its own
 * caches, leases and ledger over the shared store. The runtime listens; `--port` and `--host` choose where.
 */
import { loadConfig } from "./lib/config.ts";
import { openStore } from "./lib/store/kv.ts";
import { closeDeps, createDeps } from "./lib/deps.ts";
import { buildApp } from "./lib/http/app.ts";
import { coordinateShutdown } from "./lib/http/worker_shutdown.ts";
import { manifest } from "./routes.gen.ts";

const config = loadConfig();
const kv = await openStore(config.kvPath);
const deps = await createDeps(config, kv);
const app = buildApp(deps, manifest);
coordinateShutdown(() => closeDeps(deps));

export default {
  fetch: (request, info) => app.fetch(request, { remoteAddr: info.remoteAddr as Deno.NetAddr }),
} satisfies Deno.ServeDefaultExport;
