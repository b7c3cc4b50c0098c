import assert from "node:assert/strict";
import { openResponse } from "./http_call.ts";
import { lineFraming, type PayloadDecoder, readEventStream } from "./stream_reading.ts";
import type { ChatEvent } from "../chat/types.ts";

const CTX = {
  connectTimeoutMs: 2_000,
  firstByteTimeoutMs: 2_000,
  responseTimeoutMs: 2_000,
  idleTimeoutMs: 2_000,
  maxAnswerBytes: 100_000,
};

/** Each line as a delta; the line `END` completes the answer. */
const lines = (): PayloadDecoder => ({
  payload(text: string, out: ChatEvent[]) {
    if (text === "END") {
      out.push({ type: "done", finishReason: "stop", promptTokens: 0, completionTokens: 0 });
      return true;
    }
    out.push({ type: "delta", content: text });
    return false;
  },
  end() {},
});

/** A backend on loopback writing `pieces` as chunks of one chunked body, a pause between each. */
async function serveInPieces(pieces: Uint8Array[], run: (url: string) => Promise<void>) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const encoder = new TextEncoder();
  const served = (async () => {
    const conn = await listener.accept();
    await conn.read(new Uint8Array(8192));
    await conn.write(encoder.encode("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"));
    for (const piece of pieces) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      await conn.write(encoder.encode(`${piece.length.toString(16)}\r\n`));
      await conn.write(piece);
      await conn.write(encoder.encode("\r\n"));
    }
    await conn.write(encoder.encode("0\r\n\r\n"));
    conn.close();
  })();
  try {
    await run(`http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}/api/chat`);
  } finally {
    listener.close();
    await served;
  }
}

async function readAll(url: string): Promise<string[]> {
  const open = await openResponse(url, {}, CTX, { hasImages: false });
  const stream = await readEventStream(open, lineFraming(), lines(), "m", {
    idleMs: 2_000,
    maxEventBytes: 100_000,
  });
  const got: string[] = [];
  for await (const event of stream.events) {
    if (event.type === "delta") got.push(event.content ?? "");
    if (event.type === "done") break;
  }
  await stream.events.return?.();
  return got;
}

Deno.test("characters split across the backend's chunks arrive whole, and a body's byte-order mark is dropped", async () => {
  const bytes = new TextEncoder().encode("\uFEFFcafé 😀\nnaïve\uFEFF\nEND\n");
  // Cut inside "é" (2 bytes), inside the emoji (4 bytes), and just before the second mark.
  const e = bytes.indexOf(0xc3) + 1;
  const emoji = bytes.indexOf(0xf0) + 2;
  const mark = bytes.lastIndexOf(0xef);
  const cuts = [0, e, emoji, mark, bytes.length];
  const pieces = cuts.slice(1).map((end, i) => bytes.subarray(cuts[i], end));
  await serveInPieces(pieces, async (url) => {
    assert.deepEqual(await readAll(url), ["café 😀", "naïve\uFEFF"]);
  });
});

Deno.test("a chunk that starts with a mark in the middle of the body keeps it", async () => {
  const encoder = new TextEncoder();
  await serveInPieces([encoder.encode("a"), encoder.encode("\uFEFFb\nEND\n")], async (url) => {
    assert.deepEqual(await readAll(url), ["a\uFEFFb"]);
  });
});
