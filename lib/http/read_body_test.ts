import assert from "node:assert/strict";
import { readJsonBody } from "./read_body.ts";
import { GatewayError } from "../errors.ts";

const LIMITS = { maxBodyBytes: 1000, bodyTimeoutMs: 100 };
const encode = (s: string) => new TextEncoder().encode(s);

function post(body: ReadableStream<Uint8Array>, headers: Record<string, string> = {}): Request {
  return new Request("http://gateway.test/v1/chat.php", {
    method: "POST",
    headers: { "Content-Type": "application/json", ...headers },
    body,
  });
}

async function refusal(request: Request): Promise<GatewayError> {
  const error = await readJsonBody(request, LIMITS).then(() => undefined, (e) => e);
  assert.ok(error instanceof GatewayError, `expected a GatewayError, got ${error}`);
  return error;
}

Deno.test("a declared length over the limit is refused before any of the body is pulled", async () => {
  let pulls = 0;
  const body = new ReadableStream<Uint8Array>({ pull: (c) => void (pulls++, c.enqueue(encode("{"))) });
  const error = await refusal(post(body, { "Content-Length": "5000" }));
  assert.equal(error.status, 413);
  // A stream pulls once on its own to fill its queue; reading would have pulled on and on.
  assert.ok(pulls <= 1, `pulled ${pulls} times`);
});

Deno.test("a body that trickles past the time limit is cut off with 408", async () => {
  let sent = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(c) {
      await new Promise((r) => setTimeout(r, 20));
      if (++sent > 100) return c.close(); // bounded: the 408 must come long before this
      c.enqueue(encode(sent === 1 ? '{"messages":' : " "));
    },
  });
  const started = performance.now();
  const error = await refusal(post(body));
  assert.equal(error.status, 408);
  assert.equal(error.code, "request_timeout");
  assert.ok(sent < 100, `read ${sent} chunks`);
  assert.ok(performance.now() - started >= LIMITS.bodyTimeoutMs - 5);
});

Deno.test("a body that breaks off mid-upload is the client's error (400), not the gateway's", async () => {
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      c.enqueue(encode('{"messages":'));
      c.error(new Error("connection reset"));
    },
  });
  const error = await refusal(post(body));
  assert.equal(error.status, 400);
  assert.match(error.message, /ended before it was complete/);
});

Deno.test("a body just within the limit and the time is read and parsed", async () => {
  const text = JSON.stringify({ pad: "x".repeat(LIMITS.maxBodyBytes - 10) });
  assert.equal(encode(text).length, LIMITS.maxBodyBytes);
  const parsed = await readJsonBody(post(new Blob([text]).stream()), LIMITS);
  assert.deepEqual(parsed, JSON.parse(text));
});

Deno.test("U+FFFD sent as such is text; a byte that is not UTF-8 beside it is refused", async () => {
  const sent = (body: Uint8Array<ArrayBuffer>) =>
    new Request("http://gateway.test/v1/chat.php", {
      method: "POST",
      headers: { "Content-Type": "application/json", "Content-Length": String(body.byteLength) },
      body,
    });
  const replacement = encode('{"text":"a\uFFFDb"}');
  assert.deepEqual(await readJsonBody(sent(replacement), LIMITS), { text: "a\uFFFDb" });
  const broken = new Uint8Array([...encode('{"text":"a\uFFFD'), 0xff, ...encode('"}')]);
  const error = await refusal(sent(broken));
  assert.equal(error.status, 400);
  assert.match(error.message, /UTF-8/);
});
