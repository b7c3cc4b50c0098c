/**
 * Faults of an OpenAI-compatible backend (a fake vLLM) behind the gateway, as clients of both formats see
 * them: failures in the middle of a stream, failover across backend kinds, a model that cannot see images,
 * and a server that no longer takes the gateway's API key. None of these may look like the client's fault.
 */
import assert from "node:assert/strict";
import { USER_HELLO } from "./harness.ts";
import { FakeOllama } from "./fakes/fake_ollama.ts";
import { FakeOpenAI } from "./fakes/fake_openai.ts";
import { A, assertUsage, B, BACKEND_KEY, VllmScenario } from "./support/openai_backend.ts";
import { assertClientsRaise, assertStreamsEndInError } from "./support/streams.ts";

Deno.test("a mid-stream failure of a vLLM backend ends both formats' streams with an error, billed as partial", async () => {
  for (const kind of ["error-line", "crash", "garbage"] as const) {
    await using s = await VllmScenario.start();
    const key = await s.gw.key();
    s.fake.reply = () => ({ content: "alpha beta gamma delta" });
    s.fake.streamFault = { after: 2, kind };

    const error = await assertStreamsEndInError(s.gw, key, B, kind, ["alpha ", "beta "]);
    if (kind === "error-line") assert.match(error.message, /CUDA error: out of memory/);

    assert.equal(s.gw.usage.length, 2);
    const completionTokens = Math.ceil("alpha beta ".length / 4);
    for (const record of s.gw.usage) {
      assertUsage(record, { status: "partial", tokenSource: "estimate", completionTokens }, kind);
    }
  }
});

Deno.test("the openai SDK raises a vLLM mid-stream error; the ollama client too", async () => {
  await using s = await VllmScenario.start();
  const key = await s.gw.key();
  s.fake.reply = () => ({ content: "alpha beta gamma" });
  s.fake.streamFault = { after: 1, kind: "error-line" };
  await assertClientsRaise(s.gw.url, key, B, /CUDA error/);
});

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

Deno.test("an image sent to a text-only vLLM model gives 503 image_not_supported, not retried", async () => {
  await using s = await VllmScenario.start({ gateway: { random: () => 0.5 }, weight: 100 });
  await using other = FakeOpenAI.start("other", { apiKey: BACKEND_KEY });
  await s.gw.addServer({ name: "other", url: other.url, kind: "openai", apiKey: BACKEND_KEY });
  s.fake.mode = "text-only";
  other.mode = "text-only";
  const key = await s.gw.key({ vision: true });
  const img = "iVBORw0KGgo=";
  const b = await s.gw.post(B, key, { messages: [{ role: "user", content: "see", images: [img] }] });
  assert.equal(b.status, 503);
  assert.equal((await b.json()).error.code, "image_not_supported");
  const a = await s.gw.post(A, key, {
    messages: [{
      role: "user",
      content: [{ type: "text", text: "see" }, {
        type: "image_url",
        image_url: { url: `data:image/png;base64,${img}` },
      }],
    }],
    stream: true,
  });
  assert.equal(a.status, 503);
  assert.equal((await a.json()).error.code, "image_not_supported");
  const sent = s.fake.last.messages as { content: { type: string; image_url?: { url: string } }[] }[];
  assert.equal(sent[0].content[1].image_url?.url, `data:image/png;base64,${img}`, "the image reached vLLM");
  assert.equal(s.fake.chats.length, 2);
  assert.equal(other.chats.length, 0, "another server with the same model is not tried");
  assert.equal((await s.gw.post(B, key, { messages: USER_HELLO })).status, 200, "text still works");
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
