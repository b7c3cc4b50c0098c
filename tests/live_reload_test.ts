/**
 * The real thing: `deno task start` and `deno task admin` as separate processes on one store file. A change made
 * with the CLI must reach the running gateway within one second, and SIGTERM must stop it cleanly.
 */
import assert from "node:assert/strict";
import { FakeOllama } from "./fakes/fake_ollama.ts";
import { admin, chat, startGateway, timeUntil } from "./support/processes.ts";

Deno.test("CLI changes reach a running gateway within one second; SIGTERM exits 0", async () => {
  const dir = await Deno.makeTempDir();
  const fake = FakeOllama.start("live");
  const env = { GATEWAY_KV: `${dir}/store.kv` };
  const gateway = await startGateway(env);
  const { url } = gateway;
  try {
    await admin(env, "server", "add", "--name", "gpu1", "--url", fake.url, "--model", "m1");
    const { key } = await admin(env, "key", "create", "--model", "m1");
    const created = await timeUntil(url, key, 200);
    assert.ok(created < 1000, `new key took ${created} ms`);

    const [{ id }] = await admin(env, "key", "list");
    await admin(env, "key", "revoke", id);
    const revoked = await timeUntil(url, key, 401);
    assert.ok(revoked < 1000, `revocation took ${revoked} ms`);

    const { key: other } = await admin(env, "key", "create", "--model", "m1");
    assert.equal(await chat(url, other), 200);
    await admin(env, "server", "disable", "gpu1");
    const disabled = await timeUntil(url, other, 503);
    assert.ok(disabled < 1000, `disabling took ${disabled} ms`);
  } finally {
    const status = await gateway.stop();
    await fake.close();
    await Deno.remove(dir, { recursive: true });
    assert.equal(status.code, 0);
  }
});
