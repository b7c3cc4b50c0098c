/**
 * An image sent to a model that cannot see: whatever the backend kind, client path and streaming, the image
 * reaches the first server, whose refusal becomes 503 image_not_supported in the client's format; no other
 * server carrying the model is tried (it could not see either), the refusal is not held against the server
 * (its breaker stays closed, so text still goes to it), and the request is recorded. One table: a row per
 * backend kind and client path. How each adapter recognises the refusal is tests/contract/faults_test.ts.
 */
import assert from "node:assert/strict";
import type { BackendKind } from "../lib/store/records.ts";
import { TestGateway, USER_HELLO } from "./harness.ts";
import type { FakeBackend } from "./fakes/fake_backend.ts";
import { FakeOllama } from "./fakes/fake_ollama.ts";
import { FakeOpenAI } from "./fakes/fake_openai.ts";

const BACKEND_KEY = "sk-vllm-backend-9c1e";
const PNG = "iVBORw0KGgo=";

/** A client path, and how a user message with one image is written in its format. */
const CLIENTS = {
  "/v1/chat/completions": {
    message: {
      role: "user",
      content: [{ type: "text", text: "see" }, {
        type: "image_url",
        image_url: { url: `data:image/png;base64,${PNG}` },
      }],
    },
    errorCode: (body: { error: { code: string; type: string } }) => body.error.code,
  },
  "/v1/chat.php": {
    message: { role: "user", content: "see", images: [PNG] },
    errorCode: (body: { error: { code: string; type: string } }) => body.error.code,
  },
  "/api/chat": {
    message: { role: "user", content: "see", images: [PNG] },
    // Ollama's own error shape: the message is `error` itself.
    errorCode: (body: { code: string }) => body.code,
  },
} as const;

type ClientPath = keyof typeof CLIENTS;

const ROWS: { backend: BackendKind; path: ClientPath; stream: boolean }[] = (["ollama", "openai"] as const)
  .flatMap((backend) => [
    { backend, path: "/v1/chat/completions", stream: false },
    { backend, path: "/v1/chat/completions", stream: true },
    { backend, path: "/v1/chat.php", stream: false },
    { backend, path: "/api/chat", stream: true },
  ]);

/** Refusals sent per row: more than the breaker takes before it opens, were they held against the server. */
const TRIES = 3;

function startFake(backend: BackendKind, name: string): FakeBackend {
  return backend === "ollama" ? FakeOllama.start(name) : FakeOpenAI.start(name, { apiKey: BACKEND_KEY });
}

/** The image as the first server received it, in its own wire format. */
function imageSent(backend: BackendKind, body: Record<string, unknown>): string | undefined {
  const [first] = body.messages as Record<string, unknown>[];
  if (backend === "ollama") return (first.images as string[] | undefined)?.[0];
  const parts = first.content as { type: string; image_url?: { url: string } }[];
  return parts.find((p) => p.type === "image_url")?.image_url?.url;
}

for (const { backend, path, stream } of ROWS) {
  Deno.test(`an image to a text-only ${backend} model on ${path}${stream ? ", streamed" : ""}: 503 image_not_supported, not retried, not the server's fault`, async () => {
    const fakes = { a: startFake(backend, "a"), b: startFake(backend, "b") };
    // A draw of 0.5 keeps the heavier server first.
    const gw = await TestGateway.start({ random: () => 0.5, config: { breakerFailures: TRIES - 1 } });
    try {
      for (const [name, fake] of Object.entries(fakes)) {
        fake.mode = "text-only";
        const weight = name === "a" ? 100 : 1;
        await gw.addServer({ name, url: fake.url, kind: backend, weight, apiKey: BACKEND_KEY });
      }
      const key = await gw.key({ vision: true });
      const client = CLIENTS[path];
      for (let i = 0; i < TRIES; i++) {
        const res = await gw.post(path, key, { messages: [client.message], stream });
        assert.equal(res.status, 503);
        assert.match(res.headers.get("content-type") ?? "", /application\/json/);
        const body = await res.json();
        assert.equal(client.errorCode(body), "image_not_supported", JSON.stringify(body));
      }
      const expected = backend === "ollama" ? PNG : `data:image/png;base64,${PNG}`;
      assert.equal(imageSent(backend, fakes.a.last), expected, "the image reached the server");
      assert.equal(fakes.a.chats.length, TRIES);
      assert.equal(fakes.b.chats.length, 0, "another server with the same model is not tried");

      const text = await gw.post(path, key, { messages: USER_HELLO, stream: false });
      assert.equal(text.status, 200, "text still works");
      assert.match(await text.text(), /Hello from a/, "on the same server: its breaker stayed closed");

      const refusals = gw.usage.filter((r) => r.errorCode === "image_not_supported");
      assert.equal(refusals.length, TRIES, "each refusal is recorded");
      assert.ok(
        refusals.every((r) => r.status === "error" && r.httpStatus === 503),
        JSON.stringify(refusals),
      );
    } finally {
      await gw.close();
      await fakes.a.close();
      await fakes.b.close();
    }
  });
}
