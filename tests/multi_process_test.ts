/**
 * Several gateway processes on one store file, as an operator scales out on one machine: limits stay exact
 * across them, SQLite's "database is locked" never reaches a client, and admin changes reach every process.
 */
import assert from "node:assert/strict";
import { FakeOllama } from "./fakes/fake_ollama.ts";
import { admin, chat, type GatewayProcess, startGateway } from "./support/processes.ts";
import { eventually } from "./support/wait_for.ts";

/** The permissions of `deno task start:parallel`, run directly so the PID is the gateway's own. */
const PERMISSIONS = ["--allow-net", "--allow-env", "--allow-read", "--allow-write"];

async function burst(urls: string[], secret: string, n: number) {
  const statuses = await Promise.all(Array.from({ length: n }, async (_, i) => {
    const res = await fetch(`${urls[i % urls.length]}/v1/chat/completions`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${secret}` },
      body: JSON.stringify({ messages: [{ role: "user", content: "hi" }] }),
    });
    await res.body?.cancel();
    return res.status;
  }));
  const counts: Record<number, number> = {};
  for (const s of statuses) counts[s] = (counts[s] ?? 0) + 1;
  return counts;
}

/** A store with one fake backend, and `start` to run gateways on it. */
async function shared(
  t: Deno.TestContext,
  fn: (ctx: {
    env: Record<string, string>;
    start: (args?: string[], extraEnv?: Record<string, string>) => Promise<GatewayProcess>;
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
      start: async (args, extraEnv = {}) => {
        const gateway = await startGateway({ ...env, ...extraEnv }, args);
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

Deno.test("two gateways on one store: 200 requests at rpm 10 admit exactly 10, and every one is recorded", async (t) => {
  await shared(t, async ({ env, start }) => {
    const { key, id } = await admin(env, "key", "create", "--model", "m1", "--rpm", "10");
    const [a, b] = await Promise.all([start(), start()]);
    const counts = await burst([a.url, b.url], key, 200);
    assert.deepEqual(counts, { 200: 10, 429: 190 });
    // SIGTERM flushes each ledger; then the store holds one record per request.
    assert.deepEqual([(await a.stop()).code, (await b.stop()).code], [0, 0]);
    const { records } = await admin(env, "usage", "--key", id, "--limit", "1000");
    const byStatus = Object.groupBy(records as { status: string }[], (r) => r.status);
    assert.equal(byStatus.ok?.length, 10);
    assert.equal(byStatus.rejected?.length, 190);
  });
});

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

Deno.test("start:parallel: workers share the limit exactly and flush their ledgers on SIGTERM", async (t) => {
  await shared(t, async ({ env, start }) => {
    const { key, id } = await admin(env, "key", "create", "--model", "m1", "--rpm", "10");
    const parallel = await start(
      ["run", ...PERMISSIONS, "parallel.ts"],
      { GATEWAY_WORKERS: "2" },
    );
    const counts = await burst([parallel.url], key, 200);
    assert.deepEqual(counts, { 200: 10, 429: 190 });
    assert.equal((await parallel.stop()).code, 0);
    const { records } = await admin(env, "usage", "--key", id, "--limit", "1000");
    assert.equal(records.length, 200, "no worker lost its queued records at shutdown");
  });
});
