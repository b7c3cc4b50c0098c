/**
 * @module A gateway process over one fake Ollama server, with a key for its model and a metrics port, for
 * tests that watch how it handles connections; everything it starts is stopped and its store removed after.
 */
import { admin, type GatewayProcess, startGateway } from "./processes.ts";
import { killChild } from "./chat_streams.ts";
import { FakeOllama } from "../fakes/fake_ollama.ts";
import { freePort } from "./listening_ports.ts";

const GATEWAY = ["run", "--allow-net", "--allow-env", "--allow-read", "--allow-write", "main.ts"];
export interface Setup {
  gateway: GatewayProcess;
  key: string;
  metricsUrl: string;
}

export async function withGateway(
  env: Record<string, string>,
  fn: (setup: Setup) => Promise<void>,
  fdLimit?: number,
): Promise<void> {
  const dir = await Deno.makeTempDir();
  const fake = FakeOllama.start("a");
  const metricsPort = freePort();
  const base = { GATEWAY_KV: `${dir}/store.kv` };
  let gateway: GatewayProcess | undefined;
  try {
    await admin(base, "server", "add", "--name", "a", "--url", fake.url, "--model", "m1");
    const { key } = await admin(base, "key", "create", "--model", "m1");
    gateway = await startGateway({ ...base, GATEWAY_METRICS_PORT: String(metricsPort), ...env }, GATEWAY, {
      fdLimit,
    });
    await fn({ gateway, key, metricsUrl: `http://127.0.0.1:${metricsPort}/metrics` });
  } finally {
    if (gateway) await killChild(gateway.child);
    await fake.close();
    await Deno.remove(dir, { recursive: true });
  }
}
