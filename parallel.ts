/**
 * `deno task start:parallel`: one gateway worker per core (`GATEWAY_WORKERS`), each a whole gateway on its own
 * listener; all listen on one port (SO_REUSEPORT), so the kernel spreads connections among them, and each keeps
 * the bounds of the gateway's own listener. The servers' load is counted in memory all workers share, so a
 * server's slots are what the process sends it, not what each worker does. The first worker takes `PORT` (0: one the system chooses), the
 * others the same. Signals are the workers' to handle: each drains and flushes its own ledger, and the last
 * one to finish ends the process.
 */
import { type Config, loadConfig } from "./lib/config.ts";
import { log } from "./lib/log/mod.ts";
import { failStartup, type StartStep } from "./lib/server/startup_failure.ts";
import { SharedLoad } from "./lib/routing/mod.ts";

// A mistake in the environment is one line and exit status 1, as for `deno task start` (main.ts).
let config: Config;
try {
  config = loadConfig();
} catch (error) {
  failStartup("configuration", error);
}
const count = config.workers ?? navigator.hardwareConcurrency;
log.configure({ level: config.logLevel, format: config.logFormat });

// Without a listener here the default action of a signal would end the process before the workers drain.
for (const signal of ["SIGINT", "SIGTERM"] as const) Deno.addSignalListener(signal, () => {});

// A server's slots hold for the whole process: every worker counts every worker's requests there.
const shared = SharedLoad.allocate();

/**
 * What a worker says: once it listens, or why it cannot; and, once every worker has stopped, the process's exit
 * status (`Deno.exit` in a worker would end only that worker).
 */
type Said = { port: number } | { failed: { step: StartStep; message: string } } | { exit: number };

function startWorker(port: number): Promise<{ worker: Worker; port: number }> {
  const worker = new Worker(new URL("./parallel_worker.ts", import.meta.url), { type: "module" });
  return new Promise((resolve, reject) => {
    worker.onmessage = ({ data }: MessageEvent<Said>) => {
      if ("exit" in data) Deno.exit(data.exit);
      if ("failed" in data) failStartup(data.failed.step, new Error(data.failed.message));
      resolve({ worker, port: data.port });
    };
    worker.onerror = (event) => {
      event.preventDefault();
      reject(event.error ?? new Error(event.message));
    };
    worker.postMessage({ port, shared });
  });
}

// A worker that cannot listen (a port in use) fails the start as the single-process gateway does.
const listening = async (port: number) => {
  try {
    return await startWorker(port);
  } catch (error) {
    return failStartup("listen", error);
  }
};
const first = await listening(config.port);
const rest = await Promise.all(Array.from({ length: count - 1 }, () => listening(first.port)));
// From now on a worker's uncaught error ends the process, as it would the single-process gateway.
for (const { worker } of [first, ...rest]) worker.onerror = null;
const address = `http://${config.host}:${first.port}`;
log.info("gateway.start", `listening on ${address} with ${count} workers`, {
  address,
  workers: count,
  profile: config.profile,
  deno: Deno.version.deno,
  pid: Deno.pid,
});
