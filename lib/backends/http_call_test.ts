import assert from "node:assert/strict";
import { postJson } from "./http_call.ts";
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
