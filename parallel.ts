/**
 * The gateway for `deno serve --parallel` (`deno task start:parallel`): one isolate per core, each with its own
 * caches, leases and ledger over the shared store. The runtime listens; `--port` and `--host` choose where.
 */
import { loadConfig } from "./lib/config.ts";
import { openStore } from "./lib/store/kv.ts";
import { closeDeps, createDeps } from "./lib/deps.ts";
import { buildApp } from "./lib/http/app.ts";
import { Drain } from "./lib/http/drain.ts";
import { coordinateShutdown } from "./lib/http/worker_shutdown.ts";
import { manifest } from "./routes.gen.ts";

const config = loadConfig();
const kv = await openStore(config.kvPath);
const deps = await createDeps(config, kv);
const app = buildApp(deps, manifest);
const drain = new Drain({ graceMs: config.shutdownGraceMs });
coordinateShutdown({
  drainAndFlush: async () => {
    await drain.stop();
    await closeDeps(deps);
  },
  hurry: () => drain.hurry(),
  // The grace period, the cut, and time for the last commits.
  hangMs: config.shutdownGraceMs + 15_000,
});

export default {
  fetch: (request, info) =>
    drain.handle(
      request,
      info.completed,
      (signal) => app.fetch(request, { remoteAddr: info.remoteAddr as Deno.NetAddr, signal }),
    ),
} satisfies Deno.ServeDefaultExport;
