/**
 * One worker of `deno task start:parallel`: the whole gateway (its own caches, leases and ledger over the
 * shared store) on its own listener, which shares the port with the other workers. It listens once told the
 * port (and given the servers' load shared by all workers), and says which port it got, so that a port chosen by
 * the system (0) is the same for all.
 */
import { loadConfig } from "./lib/config.ts";
import { Gateway } from "./lib/gateway.ts";
import { SharedLoad } from "./lib/routing/mod.ts";
import { warmUpBeforeServing } from "./lib/warm_up/mod.ts";
import { unlessStopped } from "./lib/server/serve_unless_stopped.ts";
import { errorText } from "./lib/log/mod.ts";
import type { StartStep } from "./lib/server/startup_failure.ts";

// Set before the first await: a message that arrives while no handler is set is lost.
const worker = self as unknown as Worker;
const told = new Promise<{ port: number; shared: SharedArrayBuffer }>((resolve) => {
  worker.onmessage = ({ data }) => resolve(data);
});

const { port, shared } = await told;
// What stops the start (the store, a port in use) is the main isolate's to report, in one line (parallel.ts).
let step: StartStep = "store";
try {
  const gateway = await Gateway.open(loadConfig(), { shared: new SharedLoad(shared) });
  // Before listening: a signal may come first, and every worker must hear of the others' stop. The process ends
  // from its main isolate: here `Deno.exit` would end only this worker.
  gateway.stopOnSignals((code) => worker.postMessage({ exit: code }));
  await warmUpBeforeServing(gateway);
  await unlessStopped(gateway);
  step = "listen";
  const listening = gateway.listen({ port, reusePort: true });
  worker.postMessage({ port: listening.addr.port });
} catch (error) {
  worker.postMessage({ failed: { step, message: errorText(error) } });
}
