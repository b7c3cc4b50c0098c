/**
 * Two gateway processes on one KV Connect store, and the admin CLI on the same store: what the CLI changes
 * (a server disabled, a user's quota, a key revoked) reaches both gateways' in-memory views without a restart,
 * each within a second by design (a poll of the store's generation every 250 ms, then one reload). The test
 * waits up to ten seconds for each, so a loaded machine does not fail it, and prints how long each took.
 */
import assert from "node:assert/strict";
import { FakeOllama } from "./fakes/fake_ollama.ts";
import { startKvConnect } from "./support/kv_connect/mod.ts";
import { admin, chat, type GatewayProcess, startGateway } from "./support/processes.ts";
import { eventually } from "./support/wait_for.ts";

const TOKEN = "kv-connect-test-token";
const ROOMY_PROMISE_MS = 10_000;

Deno.test("on a KV Connect store at 20 ms, a server disabled, a user's quota and a key revoked on the CLI reach two other gateways", async () => {
  const dir = await Deno.makeTempDir();
  const store = await startKvConnect({ path: `${dir}/store.kv`, token: TOKEN, latencyMs: 20 });
  const fake = FakeOllama.start("views");
  const env = { GATEWAY_KV: store.url, DENO_KV_ACCESS_TOKEN: TOKEN };
  const gateways: GatewayProcess[] = [];
  try {
    await admin(env, "server", "add", "--name", "gpu1", "--url", fake.url, "--model", "m1");
    await admin(env, "user", "add", "--name", "ana");
    const { key, id } = await admin(env, "key", "create", "--model", "m1", "--user", "ana");
    gateways.push(...await Promise.all([startGateway(env), startGateway(env)]));
    const urls = gateways.map((g) => g.url);
    const took: Record<string, number[]> = {};
    /** Runs the CLI command, then waits until every gateway answers `status`; keeps how long each took. */
    const change = async (what: string, status: number, ...args: string[]) => {
      await admin(env, ...args);
      const done = performance.now();
      took[what] = await Promise.all(urls.map(async (url) => {
        await eventually(
          `${what} to reach ${url} (${status})`,
          async () => await chat(url, key) === status,
          ROOMY_PROMISE_MS,
        );
        return Math.round(performance.now() - done);
      }));
    };
    for (const url of urls) assert.equal(await chat(url, key), 200);
    await change("server disabled", 503, "server", "disable", "gpu1");
    await change("server enabled", 200, "server", "enable", "gpu1");
    await change("user quota of 1 token", 429, "user", "update", "ana", "--daily-tokens", "1");
    await change("user quota lifted", 200, "user", "update", "ana", "--daily-tokens", "none");
    await change("key revoked", 401, "key", "revoke", id);
    console.log(`ms from the CLI's exit to the change on each gateway: ${JSON.stringify(took)}`);
  } finally {
    const statuses = await Promise.all(gateways.map((g) => g.stop()));
    await fake.close();
    await store.close();
    await Deno.remove(dir, { recursive: true });
    assert.deepEqual(statuses.map((s) => s.code), gateways.map(() => 0), "clean exits");
  }
});
