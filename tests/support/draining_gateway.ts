/**
 * @module A gateway over a fresh store with two servers of model m1 (one to stream through, one to hold each
 * worker's drain busy), started with given task arguments and stopped after, with every kept connection.
 */
import { admin, type GatewayProcess, startGateway } from "./processes.ts";
import { GatedOllama } from "./gated_ollama.ts";
import { killChild } from "./chat_streams.ts";
import type { KeptConnection } from "./kept_connection.ts";

/** A store with two servers of model m1, each alone in a cluster with a key of its own. */
export interface Setup {
  store: string;
  /** Streams through `backend` (cluster main), as user team. */
  key: { id: string; key: string };
  /** Streams through `holder` (cluster hold). */
  holdKey: { id: string; key: string };
}

async function setUp(store: string, backend: GatedOllama, holder: GatedOllama): Promise<Setup> {
  const env = { GATEWAY_KV: store };
  // Declared slots: every stream held at the backends runs at once.
  for (const [name, url] of [["gpu1", backend.url], ["gpu2", holder.url]]) {
    await admin(env, "server", "add", "--name", name, "--url", url, "--model", "m1", "--slots", "32");
  }
  await admin(env, "cluster", "add", "--name", "main", "--server", "gpu1");
  await admin(env, "cluster", "add", "--name", "hold", "--server", "gpu2");
  await admin(env, "user", "add", "--name", "team");
  const key = await admin(env, "key", "create", "--model", "m1", "--user", "team", "--cluster", "main");
  const holdKey = await admin(env, "key", "create", "--model", "m1", "--cluster", "hold");
  return { store, key, holdKey };
}

/** Runs `fn` on a gateway started with `args` over a fresh store; everything it opened is closed after. */
export async function withGateway(
  args: string[],
  workers: number,
  backend: GatedOllama,
  fn: (setup: Setup, gateway: GatewayProcess, conns: KeptConnection[]) => Promise<void>,
): Promise<void> {
  const holder = new GatedOllama({ before: 2 });
  const dir = await Deno.makeTempDir();
  const conns: KeptConnection[] = [];
  let gateway: GatewayProcess | undefined;
  try {
    const setup = await setUp(`${dir}/store.kv`, backend, holder);
    gateway = await startGateway({
      GATEWAY_KV: setup.store,
      GATEWAY_WORKERS: String(workers),
      GATEWAY_SHUTDOWN_GRACE_MS: "120000",
    }, args);
    await fn(setup, gateway, conns);
  } finally {
    await Promise.all(conns.map((c) => c.client.destroy().catch(() => {})));
    if (gateway) await killChild(gateway.child);
    await backend.close();
    await holder.close();
    await Deno.remove(dir, { recursive: true });
  }
}
