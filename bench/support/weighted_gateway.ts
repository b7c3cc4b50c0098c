/**
 * @module The gateway as it routed before scheduling (a weighted random order of the servers, no slots, no
 * wait queue), for the routing bench to compare the scheduler with on one workload; operators get the
 * scheduler only. Configured from the environment as main.ts is, it listens on PORT/HOST, prints the
 * `listening on http://…` line the bench waits for, and drains on SIGTERM.
 */
import { loadConfig } from "../../lib/config.ts";
import { Gateway } from "../../lib/gateway.ts";

const gateway = await Gateway.open(loadConfig(), { routing: "weighted" });
const { addr } = await gateway.listen();
console.log(`listening on http://${addr.hostname}:${addr.port} (weighted draw)`);
gateway.stopOnSignals();
