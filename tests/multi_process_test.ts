/**
 * Several gateway processes on one store file, as an operator scales out on one machine: admin changes reach
 * every process. Limits across processes are tests/rpm_burst_test.ts (the rate limit) and
 * tests/quota_processes_test.ts (token quotas).
 */
import assert from "node:assert/strict";
import { FakeOllama } from "./fakes/fake_ollama.ts";
import { admin, chat, type GatewayProcess, startGateway } from "./support/processes.ts";
import { eventually } from "./support/wait_for.ts";

/** A store with one fake backend, and `start` to run gateways on it. */
async function shared(
  t: Deno.TestContext,
  fn: (ctx: {
    env: Record<string, string>;
    start: () => Promise<GatewayProcess>;
  }) => Promise<void>,
) {
  const dir = await Deno.makeTempDir();
  const fake = FakeOllama.start("shared");
  const env = { GATEWAY_KV: `${dir}/store.kv` };
  const running: GatewayProcess[] = [];
  try {
    await admin(env, "server", "add", "--name", "gpu1", "--url", fake.url, "--model", "m1");
    await fn({
      env,
      start: async () => {
        const gateway = await startGateway(env);
        running.push(gateway);
        return gateway;
      },
    });
  } finally {
    const statuses = await Promise.all(running.map((g) => g.stop()));
    await fake.close();
    await Deno.remove(dir, { recursive: true });
    assert.deepEqual(statuses.map((s) => s.code), running.map(() => 0), `${t.name}: clean exits`);
  }
}

Deno.test("a revoked key is refused by every running gateway, without a restart", async (t) => {
  await shared(t, async ({ env, start }) => {
    const { key, id } = await admin(env, "key", "create", "--model", "m1");
    const gateways = await Promise.all([start(), start()]);
    for (const g of gateways) assert.equal(await chat(g.url, key), 200);
    await admin(env, "key", "revoke", id);
    // Promised within a second; ten are allowed, so only a gateway that never (or only much later) sees it fails.
    await Promise.all(
      gateways.map((g, i) =>
        eventually(
          `gateway ${i + 1} to refuse the revoked key`,
          async () => await chat(g.url, key) === 401,
          10_000,
        )
      ),
    );
    for (const g of gateways) assert.equal(await chat(g.url, key), 401, "and it stays refused");
  });
});
