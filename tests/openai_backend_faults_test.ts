/**
 * Faults of an OpenAI-compatible backend (a fake vLLM) behind the gateway, as clients of both formats see
 * them: failover across backend kinds, and a server that no longer takes the gateway's API key. None of
 * these may look like the client's fault. Failures in the middle of a stream and a model that cannot see
 * images are tables over both backend kinds: tests/mid_stream_faults_test.ts, tests/image_refusal_test.ts.
 */
import assert from "node:assert/strict";
import { USER_HELLO } from "./harness.ts";
import { FakeOllama } from "./fakes/fake_ollama.ts";
import { FakeOpenAI } from "./fakes/fake_openai.ts";
import { A, B, BACKEND_KEY, VllmScenario } from "./support/openai_backend.ts";

Deno.test("failover crosses backend kinds: vLLM to Ollama and Ollama to vLLM, whole and streamed", async () => {
  // A draw of 0.5 keeps the heavier server in front, so the failing one is always tried first.
  for (const failing of ["vllm", "ollama"] as const) {
    await using s = await VllmScenario.start({
      gateway: { random: () => 0.5 },
      weight: failing === "vllm" ? 100 : 1,
    });
    await using ollama = {
      fake: FakeOllama.start("ollama"),
      async [Symbol.asyncDispose]() {
        await this.fake.close();
      },
    };
    await s.gw.addServer({
      name: "ollama",
      url: ollama.fake.url,
      kind: "ollama",
      weight: failing === "ollama" ? 100 : 1,
    });
    const key = await s.gw.key();
    const [bad, good] = failing === "vllm" ? [s.fake, ollama.fake] : [ollama.fake, s.fake];
    // Few requests: enough to cover both formats and both ways of answering, too few to trip a breaker.
    const tries = [["busy", A, false], ["not-found", B, true], ["garbage", A, true]] as const;
    for (const [mode, path, stream] of tries) {
      bad.mode = mode;
      const res = await s.gw.post(path, key, { messages: USER_HELLO, stream });
      assert.equal(res.status, 200, `${failing} ${mode}`);
      const text = await res.text();
      assert.match(text, new RegExp(`"content":"(Hello from )?${good.name}"`), `${failing} ${mode}`);
      assert.ok(!text.includes('"error"'), `${failing} ${mode}`);
    }
    assert.equal(bad.chats.length, tries.length, "the failing server was asked first every time");
    assert.equal(good.chats.length, tries.length);
  }
});

Deno.test("a server that refuses the gateway's API key is failed over, not blamed on the client", async () => {
  // A draw of 0.5 keeps the heavier server in front.
  await using s = await VllmScenario.start({ gateway: { random: () => 0.5 } });
  await using rotated = FakeOpenAI.start("rotated", { apiKey: "sk-new-key-after-rotation" });
  await s.gw.addServer({
    name: "rotated",
    url: rotated.url,
    kind: "openai",
    weight: 1000,
    apiKey: BACKEND_KEY,
  });
  const key = await s.gw.key();
  for (const path of [A, B]) {
    const res = await s.gw.post(path, key, { messages: USER_HELLO });
    assert.equal(res.status, 200, path);
    const body = await res.json();
    assert.equal(body.choices?.[0].message.content ?? body.message.content, "Hello from vllm", path);
  }
  assert.equal(rotated.chats.length, 2, "the stale-key server was tried first");
  assert.equal(rotated.chats[0].headers.get("authorization"), `Bearer ${BACKEND_KEY}`);

  s.fake.mode = "busy";
  const res = await s.gw.post(A, key, { messages: USER_HELLO });
  assert.equal(res.status, 503, "when no server is left, it is the gateway's failure, not a bad request");
  assert.equal((await res.json()).error.code, "no_healthy_server");
});
