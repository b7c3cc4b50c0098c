import assert from "node:assert/strict";
import { post } from "./upstream.ts";
import { CallAbort } from "./call_abort.ts";

/** A loopback server answering with `parts` numbered lines, 64 at a time, as fast as the socket takes them. */
function numberedLines(parts: number) {
  return Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, () => {
    let i = 0;
    const encoder = new TextEncoder();
    return new Response(
      new ReadableStream<Uint8Array>({
        pull(controller) {
          for (let n = 0; n < 64 && i < parts; n++) controller.enqueue(encoder.encode(`${i++}\n`));
          if (i === parts) controller.close();
        },
      }),
    );
  });
}

/** A chat-like call to a loopback `server`. */
function postTo(server: Deno.HttpServer<Deno.NetAddr>) {
  return post(
    `http://127.0.0.1:${server.addr.port}/`,
    { "content-type": "application/json" },
    "{}",
    new CallAbort(),
  );
}

Deno.test("a body read chunk by chunk by a slow reader arrives whole and in order, through pauses", async () => {
  const parts = 20_000;
  const server = numberedLines(parts);
  try {
    const answer = await postTo(server);
    assert.equal(answer.status, 200);
    const reader = answer.chunks();
    const decoder = new TextDecoder();
    let text = "";
    for (let reads = 0;; reads++) {
      // A reader that falls behind lets more than the high-water mark pile up, so the connection is paused
      // and resumed while it reads.
      if (reads % 16 === 0) await new Promise((resolve) => setTimeout(resolve, 1));
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    const lines = text.split("\n");
    assert.equal(lines.pop(), "");
    assert.equal(lines.length, parts);
    lines.forEach((line, i) => assert.equal(line, String(i), `line ${i}`));
  } finally {
    await server.shutdown();
  }
});

Deno.test("chunks piling up behind a reader that does not read hold bytes of their own, not shared blocks", async () => {
  const server = numberedLines(5_000);
  try {
    const answer = await postTo(server);
    // Nothing is read until the connection has paused (the high-water mark passed) or the body ended.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const reader = answer.chunks();
    const queued: Uint8Array[] = [];
    for (let read = reader.take(); read && !read.done; read = reader.take()) queued.push(read.value);
    assert.ok(queued.length > 1, `${queued.length} chunks queued`);
    // The first came to an empty queue; each one after it waited behind it.
    for (const chunk of queued.slice(1)) assert.equal(chunk.buffer.byteLength, chunk.byteLength);
    reader.cancel();
  } finally {
    await server.shutdown();
  }
});

Deno.test("a header that would break the request's framing, or that the connection sets, fails the call before anything is sent", async () => {
  let requests = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, () => {
    requests++;
    return new Response("ok");
  });
  try {
    const url = `http://127.0.0.1:${server.addr.port}/`;
    const refused: Record<string, string>[] = [
      { authorization: "Bearer a\r\nx-injected: 1" },
      { "bad name": "v" },
      { "Content-Length": "0" },
      { "transfer-encoding": "chunked" },
    ];
    for (const headers of refused) {
      await assert.rejects(post(url, headers, "{}", new CallAbort()), TypeError);
    }
    const answer = await post(url, { authorization: "Bearer fine" }, "{}", new CallAbort());
    assert.equal(await answer.text(100), "ok");
    assert.equal(requests, 1);
  } finally {
    await server.shutdown();
  }
});
