/**
 * The real thing: `deno task start` and `deno task admin` as separate processes on one store file. A change made
 * with the CLI must reach the running gateway without a restart, and SIGTERM must stop it cleanly.
 */
import assert from "node:assert/strict";
import { FakeOllama } from "./fakes/fake_ollama.ts";
import { admin, chat, startGateway } from "./support/processes.ts";
import { eventually } from "./support/wait_for.ts";

/**
 * Changes are promised within a second; the test waits up to ten for each, so a loaded machine does not fail it
 * while a gateway that needs a restart, or holds on to what it read for long, still does.
 */
const ROOMY_PROMISE_MS = 10_000;

/** Waits until `secret` gets `status` from the gateway at `url`. */
function answers(url: string, secret: string, status: number, change: string): Promise<true> {
  return eventually(
    `${change} to reach the gateway (${status})`,
    async () => await chat(url, secret) === status,
    ROOMY_PROMISE_MS,
  );
}

Deno.test("CLI changes reach a running gateway without a restart; SIGTERM exits 0", async () => {
  const dir = await Deno.makeTempDir();
  const fake = FakeOllama.start("live");
  const env = { GATEWAY_KV: `${dir}/store.kv` };
  const gateway = await startGateway(env);
  const { url } = gateway;
  try {
    await admin(env, "server", "add", "--name", "gpu1", "--url", fake.url, "--model", "m1");
    const { key } = await admin(env, "key", "create", "--model", "m1");
    await answers(url, key, 200, "a new key and server");

    const [{ id }] = await admin(env, "key", "list");
    await admin(env, "key", "revoke", id);
    await answers(url, key, 401, "a revocation");

    const { key: other } = await admin(env, "key", "create", "--model", "m1");
    assert.equal(await chat(url, other), 200);
    await admin(env, "server", "disable", "gpu1");
    await answers(url, other, 503, "a disabled server");
  } finally {
    const status = await gateway.stop();
    await fake.close();
    await Deno.remove(dir, { recursive: true });
    assert.equal(status.code, 0);
  }
});
