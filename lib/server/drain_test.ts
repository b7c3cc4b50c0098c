import assert from "node:assert/strict";
import { Drain, STOPPED } from "./drain.ts";
import { OpenStreams, type StreamEnd, streamResponse } from "../http/stream_response.ts";
import { type GatewayError, ShuttingDown } from "../errors.ts";
import type { Cut } from "../runtime/request_cut.ts";
import type { ChatEvent } from "../chat/types.ts";
import type { StreamRenderer } from "../faces/mod.ts";
import { feedResponse } from "../http/feed_response.ts";

const quiet = () => {};

/** A request that answers only when its cut aborts, with the abort's reason as the body. */
function waitForAbort(cut: Cut): Promise<Response> {
  return new Promise((resolve) => {
    cut.listen((reason) =>
      resolve(new Response(String((reason as GatewayError | undefined)?.code), { status: 503 }))
    );
  });
}

const renderer: StreamRenderer = {
  contentType: "text/plain",
  event: (e) => e.type === "delta" ? e.content ?? "" : "[end]",
  error: (e) => `[error ${e.code}]`,
};

/** A backend stream that yields one word and then waits until aborted. */
function stalledStream() {
  const aborted = Promise.withResolvers<void>();
  async function* events(): AsyncGenerator<ChatEvent> {
    yield { type: "delta", content: "hello " };
    await aborted.promise;
    throw new Error("aborted");
  }
  return {
    events: events(),
    model: "m",
    abort: () => aborted.resolve(),
    finish: () => {},
    aborted: aborted.promise,
  };
}

Deno.test("a request arriving once the drain stops is handed the stopped signal, for its route to refuse", async () => {
  const drain = new Drain({ graceMs: 1_000, streams: new OpenStreams(), log: quiet });
  assert.deepEqual(await drain.stop(), { cut: 0, abandoned: 0 });
  const signals: Cut[] = [];
  const response = await drain.handle(new Request("http://gw/"), Promise.resolve(), (cut) => {
    signals.push(cut);
    return new Response("refused", { status: 503 });
  });
  assert.equal(await response.text(), "refused", "the route's answer, not the drain's");
  assert.deepEqual(signals, [STOPPED]);
  assert.ok(STOPPED.aborted);
  assert.ok(STOPPED.reason instanceof ShuttingDown);
});

Deno.test("a refusal while the drain waits is counted until delivered, so stop returns after it", async () => {
  const drain = new Drain({ graceMs: 60_000, lingerMs: 0, streams: new OpenStreams(), log: quiet });
  const running = Promise.withResolvers<void>();
  drain.handle(new Request("http://gw/"), running.promise, () => new Response("ok"));
  let stopped = false;
  const stopping = drain.stop().then((report) => (stopped = true, report));

  const delivered = Promise.withResolvers<void>();
  const answer = Promise.withResolvers<Response>();
  const refused = drain.handle(new Request("http://gw/"), delivered.promise, (signal) => {
    assert.equal(signal, STOPPED);
    return answer.promise;
  });
  assert.equal(drain.inFlight, 2);
  running.resolve();
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.equal(drain.inFlight, 1, "the refusal is still being answered");
  answer.resolve(new Response(null, { status: 503 }));
  assert.equal((await refused).status, 503);
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.equal(stopped, false, "its answer is not delivered yet");
  delivered.resolve();
  assert.deepEqual(await stopping, { cut: 0, abandoned: 0 });
  assert.equal(drain.inFlight, 0);
});

Deno.test("after the answers running at the signal, stop lingers, and waits for a refusal that came meanwhile", async () => {
  const drain = new Drain({ graceMs: 60_000, lingerMs: 600_000, streams: new OpenStreams(), log: quiet });
  const delivered = Promise.withResolvers<void>();
  drain.handle(new Request("http://gw/"), delivered.promise, () => new Response("ok"));
  let stopped = false;
  const stopping = drain.stop().then((report) => (stopped = true, report));
  delivered.resolve();
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.equal(drain.inFlight, 0);
  assert.equal(stopped, false, "lingering after the last answer");

  // The next request on that answer's connection.
  const refusalDelivered = Promise.withResolvers<void>();
  const refused = drain.handle(
    new Request("http://gw/"),
    refusalDelivered.promise,
    (signal) => new Response(String(signal === STOPPED), { status: 503 }),
  );
  assert.equal(await (await refused).text(), "true");
  // A second signal ends the linger, not the wait for what is being answered.
  drain.hurry();
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.equal(stopped, false, "the refusal is not delivered yet");
  refusalDelivered.resolve();
  assert.deepEqual(await stopping, { cut: 0, abandoned: 0 });
});

Deno.test("the linger ends by itself; with nothing running at the signal there is none", async () => {
  const lingering = new Drain({ graceMs: 60_000, lingerMs: 20, streams: new OpenStreams(), log: quiet });
  lingering.handle(new Request("http://gw/"), Promise.resolve(), () => new Response("ok"));
  assert.deepEqual(await lingering.stop(), { cut: 0, abandoned: 0 });

  const idle = new Drain({ graceMs: 60_000, lingerMs: 600_000, streams: new OpenStreams(), log: quiet });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise((resolve) => timer = setTimeout(() => resolve("still lingering"), 10_000));
  try {
    assert.deepEqual(await Promise.race([idle.stop(), late]), { cut: 0, abandoned: 0 });
  } finally {
    clearTimeout(timer);
  }
});

Deno.test("a handler that throws on the stopped signal still settles its count", async () => {
  const drain = new Drain({ graceMs: 60_000, lingerMs: 0, streams: new OpenStreams(), log: quiet });
  const held = Promise.withResolvers<void>();
  drain.handle(new Request("http://gw/"), held.promise, () => new Response("ok"));
  const stopping = drain.stop();
  const refused = drain.handle(new Request("http://gw/"), Promise.resolve(), () => {
    throw new Error("broken route");
  });
  await assert.rejects(Promise.resolve(refused), /broken route/);
  held.resolve();
  assert.deepEqual(await stopping, { cut: 0, abandoned: 0 });
  assert.equal(drain.inFlight, 0);
});

Deno.test("stop waits for a running request, then returns once it is delivered", async () => {
  const drain = new Drain({ graceMs: 60_000, lingerMs: 0, streams: new OpenStreams(), log: quiet });
  const delivered = Promise.withResolvers<void>();
  const answer = Promise.withResolvers<Response>();
  const response = drain.handle(new Request("http://gw/"), delivered.promise, () => answer.promise);
  assert.equal(drain.inFlight, 1);
  let stopped = false;
  const stopping = drain.stop().then((report) => (stopped = true, report));
  answer.resolve(new Response("ok"));
  assert.equal(await (await response).text(), "ok");
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(stopped, false, "an undelivered response is still in flight");
  delivered.resolve();
  assert.deepEqual(await stopping, { cut: 0, abandoned: 0 });
  assert.equal(drain.inFlight, 0);
});

Deno.test("past the grace period a waiting request is aborted with ShuttingDown and open streams end", async () => {
  const streams = new OpenStreams();
  const drain = new Drain({ graceMs: 50, lingerMs: 0, streams, log: quiet });
  const delivered = Promise.withResolvers<void>();
  const response = Promise.resolve(drain.handle(new Request("http://gw/"), delivered.promise, waitForAbort));
  response.then(() => delivered.resolve());
  const ended: unknown[] = [];
  streams.add((error) => ended.push(error));
  assert.deepEqual(await drain.stop(), { cut: 1, abandoned: 0 });
  assert.equal(await (await response).text(), "shutting_down");
  assert.equal(ended.length, 1);
  assert.ok(ended[0] instanceof ShuttingDown);
});

Deno.test("a second signal ends the wait at once", async () => {
  const drain = new Drain({ graceMs: 600_000, streams: new OpenStreams(), log: quiet });
  const delivered = Promise.withResolvers<void>();
  Promise.resolve(drain.handle(new Request("http://gw/"), delivered.promise, waitForAbort))
    .then(() => delivered.resolve());
  const stopping = drain.stop();
  drain.hurry();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise((resolve) => timer = setTimeout(() => resolve("still waiting"), 10_000));
  try {
    assert.deepEqual(await Promise.race([stopping, late]), { cut: 1, abandoned: 0 });
  } finally {
    clearTimeout(timer);
  }
});

Deno.test("ending a stream sends the face's error form, aborts the backend and reports a partial end", async () => {
  const streams = new OpenStreams();
  const backend = stalledStream();
  const ends: StreamEnd[] = [];
  const response = streamResponse(renderer, backend, (end) => ends.push(end), streams);
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  assert.equal(decoder.decode((await reader.read()).value), "hello ");
  assert.equal(streams.size, 1);
  assert.equal(streams.endAll(new ShuttingDown()), 1);
  await backend.aborted;
  let rest = "";
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
    rest += decoder.decode(chunk.value);
  }
  assert.equal(rest, "[error shutting_down]");
  assert.equal(ends.length, 1);
  assert.equal(ends[0].error?.code, "shutting_down");
  assert.equal(ends[0].clientLeft, false);
  assert.equal(ends[0].deliveredChars, "hello ".length);
  assert.equal(streams.size, 0);
});

Deno.test("a stream that opens after the streams were ended ends at once, recorded once", async () => {
  const streams = new OpenStreams();
  streams.endAll(new ShuttingDown());
  const backend = stalledStream();
  const ends: StreamEnd[] = [];
  const response = streamResponse(renderer, backend, (end) => ends.push(end), streams);
  assert.equal(await response.text(), "[error shutting_down]");
  assert.deepEqual(ends.map((e) => e.error?.code), ["shutting_down"]);
});

Deno.test("a client that leaves still aborts its request's signal", async () => {
  const drain = new Drain({ graceMs: 1_000, lingerMs: 0, streams: new OpenStreams(), log: quiet });
  const client = new AbortController();
  const delivered = Promise.withResolvers<void>();
  const response = drain.handle(
    new Request("http://gw/", { signal: client.signal }),
    delivered.promise,
    waitForAbort,
  );
  client.abort();
  // An ordinary ending of the request, not an unexpected failure.
  assert.equal(await (await response).text(), "client_closed");
  delivered.resolve();
  assert.deepEqual(await drain.stop(), { cut: 0, abandoned: 0 });
});

Deno.test("an open-ended body that is not a chat stream (a live feed) is ended as soon as the drain stops", async () => {
  const streams = new OpenStreams();
  const drain = new Drain({ graceMs: 600_000, streams, log: quiet });
  const feedDelivered = Promise.withResolvers<void>();
  const feed = await drain.handle(new Request("http://gw/"), feedDelivered.promise, (signal) => {
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        signal.listen(() => controller.close());
      },
    });
    return feedResponse(body);
  });
  feed.body!.pipeTo(new WritableStream()).then(() => feedDelivered.resolve());

  const backend = stalledStream();
  const chat = drain.handle(
    new Request("http://gw/"),
    backend.aborted,
    () => streamResponse(renderer, backend, () => {}, streams),
  );
  await chat;
  const stopping = drain.stop();
  await feedDelivered.promise;
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.equal(drain.inFlight, 1, "the feed is done; the chat stream still runs");
  assert.equal(streams.size, 1);
  drain.hurry();
  assert.deepEqual(await stopping, { cut: 1, abandoned: 0 });
});
