/**
 * @module The services every stage receives explicitly, so tests can swap the clock, the random source,
 * the store and the network.
 */
import type { Config } from "./config.ts";
import { StoreView } from "./store/view.ts";

export interface Deps {
  config: Config;
  view: StoreView;
  /** Milliseconds since the epoch. */
  now: () => number;
  /** Uniform in [0, 1); drives weighted server selection. */
  random: () => number;
  fetch: typeof fetch;
}

export async function createDeps(config: Config, kv: Deno.Kv): Promise<Deps> {
  return {
    config,
    view: await StoreView.open(kv, config.reloadIntervalMs),
    now: Date.now,
    random: Math.random,
    fetch: globalThis.fetch,
  };
}
