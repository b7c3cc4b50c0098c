/**
 * @module The services every stage receives explicitly, so tests can swap the clock, the random source,
 * the store and the network.
 */
import type { Config } from "./config.ts";
import { StoreView } from "./store/view.ts";
import type { UsageSink } from "./usage/types.ts";
import { UsageLedger } from "./usage/mod.ts";

export interface Deps {
  config: Config;
  view: StoreView;
  /** Milliseconds since the epoch. */
  now: () => number;
  /** Uniform in [0, 1); drives weighted server selection. */
  random: () => number;
  fetch: typeof fetch;
  /** Receives one usage record per request. */
  usage: UsageSink;
}

/** The running gateway's services, with what must be closed (and flushed) on shutdown. */
export interface GatewayDeps extends Deps {
  usage: UsageLedger;
}

export async function createDeps(config: Config, kv: Deno.Kv): Promise<GatewayDeps> {
  return {
    config,
    view: await StoreView.open(kv, config.reloadIntervalMs),
    now: Date.now,
    random: Math.random,
    fetch: globalThis.fetch,
    usage: new UsageLedger(kv, { onError: (e) => console.error("gateway: usage ledger:", e) }),
  };
}
