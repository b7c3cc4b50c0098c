/**
 * `start:parallel`: a server's `--slots` holds for the whole process. Each worker is a whole gateway, but the
 * servers' load is counted in memory the workers share, so two workers never send a server more than it runs.
 */
import assert from "node:assert/strict";
import { FakeOllama } from "./fakes/fake_ollama.ts";
import { admin, startGateway } from "./support/processes.ts";

const PERMISSIONS = ["--allow-net", "--allow-env", "--allow-read", "--allow-write"];

Deno.test("start:parallel: two workers together send a --slots 2 server at most two requests at once", async () => {
  const dir = await Deno.makeTempDir();
  const fake = FakeOllama.start("gpu1");
  fake.chunkDelayMs = 20;
  fake.reply = () => ({ content: "one two three four five" });
  const env = { GATEWAY_KV: `${dir}/store.kv`, GATEWAY_WORKERS: "2" };
  try {
    await admin(env, "server", "add", "--name", "gpu1", "--url", fake.url, "--model", "m1", "--slots", "2");
    const { key } = await admin(env, "key", "create", "--model", "m1");
    const gateway = await startGateway(env, ["run", ...PERMISSIONS, "parallel.ts"]);
    try {
      // Each request on a connection of its own, so the kernel spreads them over both workers.
      const statuses = await Promise.all(Array.from({ length: 24 }, async () => {
        const client = Deno.createHttpClient({ poolMaxIdlePerHost: 0 });
        try {
          const res = await fetch(`${gateway.url}/v1/chat/completions`, {
            method: "POST",
            client,
            headers: { "Content-Type": "application/json", Authorization: `Bearer ${key}` },
            body: JSON.stringify({ messages: [{ role: "user", content: "hi" }], stream: true }),
          });
          await res.text();
          return res.status;
        } finally {
          client.close();
        }
      }));
      assert.deepEqual(statuses, statuses.map(() => 200));
      assert.equal(fake.chats.length, 24);
      assert.ok(fake.peakHeld <= 2, `the server was sent ${fake.peakHeld} at once`);
    } finally {
      assert.equal((await gateway.stop()).code, 0);
    }
  } finally {
    await fake.close();
    await Deno.remove(dir, { recursive: true });
  }
});
