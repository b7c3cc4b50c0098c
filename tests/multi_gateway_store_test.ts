/**
 * Two gateway processes on one network store, reached over KV Connect (`GATEWAY_KV=http://...`) as a team
 * runs several machines on one `denokv`: a key's rpm limit stays exact across them, with and without latency
 * between the gateways and the store.
 */
import assert from "node:assert/strict";
import { FakeOllama } from "./fakes/fake_ollama.ts";
import { startKvConnect } from "./support/kv_connect/mod.ts";
import { admin, type GatewayProcess, startGateway } from "./support/processes.ts";
import { clearOfMinuteEnd } from "./support/wait_for.ts";

const TOKEN = "kv-connect-test-token";

async function burst(urls: string[], secret: string, n: number) {
  const statuses = await Promise.all(Array.from({ length: n }, async (_, i) => {
    const res = await fetch(`${urls[i % urls.length]}/v1/chat/completions`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${secret}` },
      body: JSON.stringify({ model: "m1", messages: [{ role: "user", content: "hi" }] }),
    });
    await res.body?.cancel();
    return res.status;
  }));
  const counts: Record<number, number> = {};
  for (const s of statuses) counts[s] = (counts[s] ?? 0) + 1;
  return counts;
}

for (const latencyMs of [0, 20]) {
  Deno.test(`two gateways on one KV Connect store at ${latencyMs} ms: 400 requests at rpm 50 admit exactly 50`, async () => {
    const dir = await Deno.makeTempDir();
    const store = await startKvConnect({ path: `${dir}/store.kv`, token: TOKEN, latencyMs });
    const fake = FakeOllama.start("shared");
    const env = { GATEWAY_KV: store.url, DENO_KV_ACCESS_TOKEN: TOKEN };
    const gateways: GatewayProcess[] = [];
    try {
      await admin(env, "server", "add", "--name", "gpu1", "--url", fake.url, "--model", "m1");
      const { key } = await admin(env, "key", "create", "--model", "m1", "--rpm", "50");
      const started = await Promise.allSettled([startGateway(env), startGateway(env)]);
      for (const s of started) if (s.status === "fulfilled") gateways.push(s.value);
      for (const s of started) if (s.status === "rejected") throw s.reason;
      // A burst across a minute's end would meet two minutes' budgets.
      await clearOfMinuteEnd();
      const before = store.requests();
      const counts = await burst(gateways.map((g) => g.url), key, 400);
      assert.deepEqual(counts, { 200: 50, 429: 350 });
      assert.ok(
        store.requests().atomic_write > before.atomic_write,
        "the limit was counted in the network store",
      );
    } finally {
      const statuses = await Promise.all(gateways.map((g) => g.stop()));
      await fake.close();
      await store.close();
      await Deno.remove(dir, { recursive: true });
      assert.deepEqual(statuses.map((s) => s.code), gateways.map(() => 0), "clean exits");
    }
  });
}
