import assert from "node:assert/strict";
import { errorMessage, postJson } from "./http_call.ts";
import { BadGateway } from "../errors.ts";

/** Whether `promise` settles to true within 2 s. */
async function within2s(promise: Promise<boolean>): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<boolean>((resolve) => timer = setTimeout(() => resolve(false), 2_000));
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

const CTX = {
  connectTimeoutMs: 2_000,
  firstByteTimeoutMs: 2_000,
  responseTimeoutMs: 2_000,
  idleTimeoutMs: 2_000,
  maxAnswerBytes: 1_000,
};

Deno.test("an answer declared larger than the limit is refused unread, and its connection closed", async () => {
  let closed = false;
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const served = (async () => {
    const conn = await listener.accept();
    await conn.read(new Uint8Array(4096));
    await conn.write(new TextEncoder().encode("HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\n{"));
    // The gateway hangs up instead of waiting for 4999 more bytes.
    closed = await within2s(conn.read(new Uint8Array(16)).then((n) => n === null, () => true));
    conn.close();
  })();
  try {
    const url = `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}/api/chat`;
    await assert.rejects(postJson(url, {}, CTX, { hasImages: false }), (error) => {
      assert.ok(error instanceof BadGateway);
      assert.match(error.message, /larger than 1000 bytes/);
      return true;
    });
    await served;
    assert.ok(closed);
  } finally {
    listener.close();
  }
});

Deno.test("an answer that grows past the limit while read is refused, and its connection closed", async () => {
  const { promise: cut, resolve } = Promise.withResolvers<boolean>();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, () =>
    new Response(
      new ReadableStream({
        pull: (controller) => controller.enqueue(new TextEncoder().encode(" ".repeat(400))),
        // The endless body is cancelled when the gateway hangs up.
        cancel: () => resolve(true),
      }),
    ));
  try {
    await assert.rejects(
      postJson(`http://127.0.0.1:${server.addr.port}/api/chat`, {}, CTX, { hasImages: false }),
      /larger than 1000 bytes/,
    );
    assert.ok(await within2s(cut), "the connection stayed open");
  } finally {
    await server.shutdown();
  }
});

Deno.test("a backend's message reaches clients without addresses or file paths, its words and model tags kept", () => {
  const cases: [string, string][] = [
    [
      '{"error":"dial tcp 10.0.0.5:11434: connect: connection refused"}',
      "dial tcp <address>: connect: connection refused",
    ],
    ['{"error":"post http://127.0.0.1:41235/completion: EOF"}', "post <address> EOF"],
    ['{"error":{"message":"runner at [fd00::5]:8000 failed"}}', "runner at <address> failed"],
    ['{"error":"gpu-box.internal:11434 is not answering"}', "<address> is not answering"],
    ["model 10.1.2.3 busy", "model <address> busy"],
    [
      '{"error":"open /usr/share/ollama/.ollama/models/blobs/sha256-6a0746a1: no such file"}',
      "open <path>: no such file",
    ],
    ['{"error":"cannot load C:\\\\Users\\\\ops\\\\models\\\\q4.gguf"}', "cannot load <path>"],
    [
      '{"error":"model \\"llama3:8b\\" not found, try pulling it first"}',
      'model "llama3:8b" not found, try pulling it first',
    ],
    ['{"error":"gemma:2 needs 2/3 of the memory"}', "gemma:2 needs 2/3 of the memory"],
  ];
  for (const [body, expected] of cases) assert.equal(errorMessage(body), expected, body);
});
