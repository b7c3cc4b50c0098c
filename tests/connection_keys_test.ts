/**
 * One keep-alive connection carrying several keys, on the real gateway process (its own listener remembers
 * the digest of the secret a connection presented last): each request is still answered as its own key's,
 * and a key revoked while the connection stays open is refused on it.
 */
import assert from "node:assert/strict";
import { admin, startGateway } from "./support/processes.ts";
import { killChild } from "./support/chat_streams.ts";
import { connectTo, postOn } from "./support/raw_http.ts";
import { FakeOllama } from "./fakes/fake_ollama.ts";

const GATEWAY = ["run", "--allow-net", "--allow-env", "--allow-read", "--allow-write", "main.ts"];
const CHAT = { messages: [{ role: "user", content: "hi" }] };

Deno.test("keys that alternate on one connection are each their own, and a revoked one is refused there", async () => {
  const dir = await Deno.makeTempDir();
  const fake = FakeOllama.start("a");
  fake.models = ["m1", "m2"];
  const env = { GATEWAY_KV: `${dir}/store.kv`, GATEWAY_RELOAD_INTERVAL_MS: "50" };
  const gateway = await (async () => {
    await admin(env, "server", "add", "--name", "a", "--url", fake.url, "--model", "m1", "--model", "m2");
    return await startGateway(env, GATEWAY);
  })();
  const conn = await connectTo(gateway.url);
  try {
    const one = await admin(env, "key", "create", "--model", "m1");
    const two = await admin(env, "key", "create", "--model", "m2");
    const modelFor = async (key: string) => {
      const answer = await postOn(conn, "/v1/chat/completions", key, CHAT);
      return {
        status: answer.status,
        model: answer.status === 200 ? JSON.parse(answer.body).model : undefined,
      };
    };
    // The gateway's view of the store catches up with a key's change within its reload interval.
    const onceChanged = async (key: string, before: number) => {
      let answer = await modelFor(key);
      for (let i = 0; answer.status === before && i < 40; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        answer = await modelFor(key);
      }
      return answer;
    };
    assert.deepEqual(await onceChanged(one.key, 401), { status: 200, model: "m1" });
    for (const [key, model] of [[two.key, "m2"], [two.key, "m2"], [one.key, "m1"], [two.key, "m2"]]) {
      assert.deepEqual(await modelFor(key), { status: 200, model });
    }
    assert.equal((await modelFor(one.key.slice(0, -1) + "x")).status, 401);
    assert.deepEqual(await modelFor(one.key), { status: 200, model: "m1" });

    await admin(env, "key", "revoke", one.id);
    assert.equal((await onceChanged(one.key, 200)).status, 401);
    assert.deepEqual(await modelFor(two.key), { status: 200, model: "m2" });
  } finally {
    conn.close();
    await killChild(gateway.child);
    await fake.close();
    await Deno.remove(dir, { recursive: true });
  }
});
