/**
 * A model server is shared by every key on it: no client may unload the model (`keep_alive: 0`), pin it
 * (`-1`), or make Ollama reload it with a context size of its own (`num_ctx`). Checked on what reaches a real
 * (fake) Ollama server.
 */
import assert from "node:assert/strict";
import { Scenario, USER_HELLO } from "./harness.ts";

const A = "/v1/chat/completions";
const B = "/api/chat";

type Json = Record<string, unknown>;

Deno.test("a client's keep_alive never reaches the server, in either format, streamed or not", async () => {
  await using s = await Scenario.start([{ name: "a", maxCtx: 8192 }]);
  // A key with ceilings too: they bound sizes, they are no licence to steer the server's memory.
  const keys = [await s.gw.key(), await s.gw.key({ maxCtx: 4096, maxPredict: 256 })];
  for (const key of keys) {
    for (const keepAlive of [0, -1, "0s", "-1m", "10m", 3600]) {
      for (const stream of [false, true]) {
        for (const path of [A, B]) {
          const res = await s.gw.post(path, key, { messages: USER_HELLO, stream, keep_alive: keepAlive });
          assert.equal(res.status, 200, `${path} ${keepAlive}`);
          await res.body?.cancel();
          const sent = s.fake().last as Json;
          assert.equal("keep_alive" in sent, false, `${path} keep_alive ${keepAlive} stream ${stream}`);
        }
      }
    }
  }
});

Deno.test("a client's num_ctx is replaced by the key's default, or dropped when the key has none", async () => {
  await using s = await Scenario.start([{ name: "a", maxCtx: 8192 }]);
  const sentCtx = async (key: string, path: string, body: Json) => {
    const res = await s.gw.post(path, key, { messages: USER_HELLO, ...body });
    assert.equal(res.status, 200);
    await res.body?.cancel();
    return ((s.fake().last as Json).options as Json | undefined)?.num_ctx;
  };
  const bare = await s.gw.key();
  const ceiling = await s.gw.key({ maxCtx: 4096 });
  const fixed = await s.gw.key({ maxCtx: 4096, defaultCtx: 4096 });
  for (const body of [{ num_ctx: 512 }, { options: { num_ctx: 2048 } }, { num_ctx: 100000 }]) {
    const path = "options" in body ? B : A;
    // Below a ceiling too: any value other than the loaded one makes Ollama reload the model.
    assert.equal(await sentCtx(bare, path, body), undefined, `no default: ${JSON.stringify(body)}`);
    assert.equal(await sentCtx(ceiling, path, body), undefined, `ceiling only: ${JSON.stringify(body)}`);
    assert.equal(await sentCtx(fixed, path, body), 4096, `the key's default: ${JSON.stringify(body)}`);
  }
  assert.equal(await sentCtx(fixed, A, {}), 4096, "the default without a client value, as before");
  // Everything else the client set still passes.
  await sentCtx(bare, B, { options: { num_ctx: 512, temperature: 0.3, num_predict: 9 } });
  assert.deepEqual((s.fake().last as Json).options, { temperature: 0.3, num_predict: 9 });
});
