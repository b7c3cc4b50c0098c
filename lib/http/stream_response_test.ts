import assert from "node:assert/strict";
import { OpenStreams, type StreamEnd, streamResponse } from "./stream_response.ts";
import type { ChatEvent } from "../chat/types.ts";
import type { StreamRenderer } from "../faces/mod.ts";
import { within as settles } from "../../tests/support/wait_for.ts";

const renderer: StreamRenderer = {
  contentType: "text/plain",
  event: (e) => e.type === "delta" ? e.content ?? "" : "[end]",
  error: (e) => `[error ${e.code}]`,
};

const STALL_MS = 100;

/** `promise`, failing if it takes over 10 s: its timer also keeps the test alive while a deadline runs. */
const within = <T>(promise: Promise<T>) => settles("the awaited step", promise, 10_000);

/** A backend stream of `words`, each after `delayMs`, then its end; `aborted` settles when it is aborted. */
function backend(words: number, delayMs = 0) {
  const aborted = Promise.withResolvers<void>();
  let isAborted = false;
  async function* events(): AsyncGenerator<ChatEvent> {
    for (let i = 0; i < words; i++) {
      if (delayMs) await new Promise((resolve) => setTimeout(resolve, delayMs));
      if (isAborted) throw new Error("aborted");
      yield { type: "delta", content: `w${i} ` };
    }
    yield { type: "done", finishReason: "stop", promptTokens: 1, completionTokens: words };
  }
  return {
    events: events(),
    model: "m",
    abort: () => {
      isAborted = true;
      aborted.resolve();
    },
    finish: () => {},
    aborted: aborted.promise,
  };
}

Deno.test("a client that takes nothing more for the stall time is cut off: body errored, backend aborted", async () => {
  const stream = backend(1_000_000);
  const ended = Promise.withResolvers<StreamEnd>();
  const response = streamResponse(renderer, stream, ended.resolve, new OpenStreams(), STALL_MS);
  const reader = response.body!.getReader();
  assert.equal(new TextDecoder().decode((await reader.read()).value), "w0 ");
  // Nothing more is read: the one chunk the stream keeps ready is never taken.
  const end = await within(ended.promise);
  await stream.aborted;
  assert.equal(end.error?.code, "client_stalled");
  assert.equal(end.clientLeft, false);
  assert.equal(end.done, undefined);
  assert.equal(end.deliveredChars, "w0 w1 ".length);
  // The body is errored, not closed with an error form nobody would read: the runtime then cuts the connection.
  await assert.rejects(async () => {
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read());
  }, (error: Error) => (error as { code?: string }).code === "client_stalled");
});

Deno.test("waiting for a slow backend is not the client stalling: a reading client gets the whole answer", async () => {
  // Each event takes longer than the stall time to come; the client takes each one as it comes.
  const stream = backend(4, STALL_MS * 2);
  const ended = Promise.withResolvers<StreamEnd>();
  const response = streamResponse(renderer, stream, ended.resolve, new OpenStreams(), STALL_MS);
  assert.equal(await response.text(), "w0 w1 w2 w3 [end]");
  const end = await ended.promise;
  assert.equal(end.error, undefined);
  assert.equal(end.done?.completionTokens, 4);
});

/** A backend stream whose first reads brought `ready` events (taken without waiting), then `later` ones. */
function arrived(ready: ChatEvent[], later: ChatEvent[] = []) {
  const queue = [...ready];
  let finished = false;
  async function* rest(): AsyncGenerator<ChatEvent> {
    for (const event of later) {
      await new Promise((resolve) => setTimeout(resolve, 5));
      yield event;
    }
  }
  const tail = rest();
  const events = Object.assign(tail, { take: () => queue.shift() });
  return { events, model: "m", abort: () => {}, finish: () => finished = true, finished: () => finished };
}

const done: ChatEvent = { type: "done", finishReason: "stop", promptTokens: 1, completionTokens: 2 };

Deno.test("an answer complete before its first byte goes out whole in one write and is recorded at once", async () => {
  const stream = arrived([{ type: "delta", content: "a " }, { type: "delta", content: "b " }, done]);
  let end: StreamEnd | undefined;
  const response = streamResponse(renderer, stream, (e) => end = e, new OpenStreams(), STALL_MS);
  assert.equal(end?.done?.completionTokens, 2, "recorded before the body is read");
  assert.equal(end?.deliveredChars, 4);
  assert.ok(stream.finished(), "the backend's body is read to its end, for the connection's reuse");
  assert.equal(response.headers.get("Content-Type"), "text/plain");
  assert.equal(response.headers.get("Cache-Control"), "no-cache");
  assert.equal(
    response.headers.get("X-Accel-Buffering"),
    null,
    "a body of known length has nothing to hold back",
  );
  assert.equal(await response.text(), "a b [end]");
});

Deno.test("events that came before the first byte go out in the first chunk, the rest as they come", async () => {
  const stream = arrived([{ type: "delta", content: "a " }, { type: "delta", content: "b " }], [
    { type: "delta", content: "c " },
    done,
  ]);
  const ended = Promise.withResolvers<StreamEnd>();
  const response = streamResponse(renderer, stream, ended.resolve, new OpenStreams(), STALL_MS);
  assert.equal(response.headers.get("Cache-Control"), "no-cache");
  assert.equal(response.headers.get("X-Accel-Buffering"), "no", "a proxy in front must pass each chunk on");
  const reader = response.body!.getReader();
  const text = new TextDecoder();
  assert.equal(text.decode((await reader.read()).value), "a b ");
  let rest = "";
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
    rest += text.decode(chunk.value);
  }
  assert.equal(rest, "c [end]");
  const end = await ended.promise;
  assert.equal(end.deliveredChars, 6);
  assert.equal(end.done?.completionTokens, 2);
});
