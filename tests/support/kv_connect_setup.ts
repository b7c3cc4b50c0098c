/**
 * @module A KV Connect test server over a fresh local store, with Deno's remote client connected to it, torn
 * down after each use.
 */
import { type KvConnectServer, openKvConnect, startKvConnect } from "./kv_connect/mod.ts";

export const TOKEN = "kv-connect-test-token";

export interface Setup {
  server: KvConnectServer;
  /** Deno's remote client, connected to the server. */
  kv: Deno.Kv;
  /** The local store file behind the server. */
  path: string;
}

export async function withServer(fn: (setup: Setup) => Promise<void>, latencyMs = 0) {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/store.kv`;
  const server = await startKvConnect({ path, token: TOKEN, latencyMs });
  const kv = await openKvConnect(server.url, TOKEN);
  try {
    await fn({ server, kv, path });
  } finally {
    kv.close();
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
}
