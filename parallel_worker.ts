/**
 * One worker of `deno task start:parallel`: the whole gateway (its own caches, leases and ledger over the
 * shared store) on its own listener, which shares the port with the other workers. It listens once told the
 * port (and given the servers' load shared by all workers), and says which port it got, so that a port chosen by
 * the system (0) is the same for all.
 */
import { loadConfig } from "./lib/config.ts";
import { openStore } from "./lib/store/kv.ts";
import { closeDeps, createDeps } from "./lib/deps.ts";
import { buildApp } from "./lib/http/app.ts";
import { Drain } from "./lib/http/drain.ts";
import { listenForGateway } from "./lib/http/serve.ts";
import type { Listening } from "./lib/http/listener.ts";
import { coordinateShutdown } from "./lib/http/worker_shutdown.ts";
import { SharedLoad } from "./lib/routing/mod.ts";
import { manifest } from "./routes.gen.ts";

// Set before the first await: a message that arrives while no handler is set is lost.
const worker = self as unknown as Worker;
const told = new Promise<{ port: number; shared: SharedArrayBuffer }>((resolve) => {
  worker.onmessage = ({ data }) => resolve(data);
});

const config = loadConfig();
const kv = await openStore(config.kvPath);
const deps = await createDeps(config, kv, new SharedLoad((await told).shared));
const app = buildApp(deps, manifest);
const drain = new Drain({ graceMs: config.shutdownGraceMs });
// Filled in once listening; a signal may come before.
const served: { listening?: Listening } = {};
coordinateShutdown({
  drainAndFlush: async () => {
    served.listening?.close();
    await drain.stop();
    await closeDeps(deps);
  },
  hurry: () => drain.hurry(),
  // The grace period, the cut, and time for the last commits.
  hangMs: config.shutdownGraceMs + 15_000,
});

served.listening = listenForGateway(app, { ...config, port: (await told).port }, drain, true);
worker.postMessage({ port: served.listening.addr.port });
