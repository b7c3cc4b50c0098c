import assert from "node:assert/strict";
import { readJsonBody, releaseBody } from "./read_body.ts";
import { bodyMemoryFor } from "./body_budget.ts";
import { GatewayError } from "../errors.ts";
import { within as settles } from "../../tests/support/wait_for.ts";

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

/** `promise`, failing if it takes over 10 s: its timer also keeps the test alive while a deadline runs. */
const within = <T>(promise: Promise<T>) => settles("the awaited step", promise, 10_000);

/** Limits whose budget holds one counted body of 100 KiB at a time. */
function countedLimits() {
  return { maxBodyBytes: 1024 * 1024, bodyTimeoutMs: 10_000, bodyMemoryBytes: bodyMemoryFor(150 * 1024) };
}

/** A JSON body of `bytes`, sent with its length or chunked; `pulls` counts the reads of it. */
function largeBody(bytes: number, declared: boolean) {
  const text = JSON.stringify({ pad: "x".repeat(bytes - 10) });
  const data = encode(text);
  let pulls = 0;
  let sent = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(c) {
      pulls++;
      if (sent >= data.length) return c.close();
      c.enqueue(data.subarray(sent, sent += 16 * 1024));
    },
  }, { highWaterMark: 0 });
  const headers: Record<string, string> = declared ? { "Content-Length": String(data.length) } : {};
  return { request: post(body, headers), pulls: () => pulls, text };
}

for (const declared of [true, false]) {
  const framing = declared ? "a declared length" : "a chunked body";
  Deno.test(`${framing}: a large body counts until released; the next waits for it, then is read`, async () => {
    const limits = countedLimits();
    const first = largeBody(100 * 1024, declared);
    assert.deepEqual(await readJsonBody(first.request, limits, true), JSON.parse(first.text));
    const second = largeBody(100 * 1024, declared);
    const reading = readJsonBody(second.request, limits, true);
    // Its wait is what keeps the second from being read in full.
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.ok(second.pulls() < 8, `read ${second.pulls()} of 8 pieces while the first was counted`);
    releaseBody(first.request);
    assert.deepEqual(await reading, JSON.parse(second.text));
    releaseBody(second.request);
    // Released, both: a third is read at once.
    const third = largeBody(100 * 1024, declared);
    assert.deepEqual(await readJsonBody(third.request, limits, true), JSON.parse(third.text));
    releaseBody(third.request);
  });

  Deno.test(`${framing}: a large body that does not fit within the wait gets 503 with Retry-After`, async () => {
    const limits = countedLimits();
    const held = largeBody(100 * 1024, declared);
    await readJsonBody(held.request, limits, true);
    const late = largeBody(100 * 1024, declared);
    const error = await within(readJsonBody(late.request, limits, true).then(() => undefined, (e) => e));
    assert.ok(error instanceof GatewayError, `expected a GatewayError, got ${error}`);
    assert.equal(error.status, 503);
    assert.equal(error.code, "body_memory_full");
    assert.equal(error.headers()["Retry-After"], "2");
    assert.equal(error.headers()["Connection"], "close", "the rest of the body is never read");
    if (declared) assert.ok(late.pulls() <= 1, "refused before its body was read");
    releaseBody(held.request);
    // The refusal counted nothing: a body fits again at once.
    const next = largeBody(100 * 1024, declared);
    await readJsonBody(next.request, limits, true);
    releaseBody(next.request);
  });
}

Deno.test("small bodies are never counted, and uncounted reads never touch the budget", async () => {
  const limits = { ...countedLimits(), bodyMemoryBytes: 1 };
  for (let i = 0; i < 3; i++) {
    assert.deepEqual(await readJsonBody(post(new Blob(['{"a":1}']).stream()), limits, true), { a: 1 });
  }
  const large = largeBody(100 * 1024, true);
  assert.deepEqual(await readJsonBody(large.request, limits), JSON.parse(large.text));
});
