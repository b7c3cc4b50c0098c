/**
 * The contract's broken streams: once a stream has begun, failover can no longer hide a fault, so every
 * adapter must end the events with the same GatewayError, never a done event that would bill zeros, and must
 * close the backend's connection when it gives up. A fault before the first chunk still fails stream() itself,
 * where failover applies.
 */
import assert from "node:assert/strict";
import type { ChatEvent } from "../../lib/chat/types.ts";
import type { StreamFault } from "../fakes/fake_backend.ts";
import {
  BACKEND_FAILED,
  chatRequest,
  collect,
  context,
  cutShort,
  eventually,
  type Expected,
  failsAs,
  forEachCase,
  INVALID_ANSWER,
  serverFor,
  startFake,
} from "./cases.ts";

/** What a stream that breaks after it began must end with. */
const STREAM_FAULTS: [StreamFault["kind"], Expected][] = [
  ["crash", { ...BACKEND_FAILED, message: /broke off/ }],
  ["garbage", { ...INVALID_ANSWER, message: /malformed stream/ }],
  ["error-line", { ...BACKEND_FAILED, message: /reported an error: CUDA error: out of memory/ }],
  // The context's bound is 1 MB.
  ["endless", {
    ...INVALID_ANSWER,
    message: /^The model server sent a stream event larger than 1000000 bytes$/,
  }],
];

forEachCase((c, adapter, t) => {
  for (const [kind, expected] of STREAM_FAULTS) {
    t(`a stream fault (${kind}) after two chunks ends the events with a GatewayError`, async () => {
      await using fake = startFake(c);
      fake.reply = () => ({ content: "alpha beta gamma delta" });
      fake.streamFault = { after: 2, kind };
      const stream = await adapter.stream(chatRequest({ stream: true }), serverFor(c, fake), context());
      const seen: string[] = [];
      await assert.rejects(async () => {
        for await (const event of stream.events) {
          assert.equal(event.type, "delta", "no done event from a broken stream");
          if (event.type === "delta") seen.push(event.content ?? "");
        }
      }, failsAs(expected, kind));
      assert.deepEqual(seen, ["alpha ", "beta "], "what came before the fault is delivered");
      assert.equal(fake.streamsCompleted, 0);
    });

    t(
      `a stream fault (${kind}) before the first chunk fails stream() itself, so failover applies`,
      async () => {
        await using fake = startFake(c);
        fake.reply = () => ({ content: "alpha beta" });
        fake.streamFault = { after: 0, kind };
        await assert.rejects(
          adapter.stream(chatRequest({ stream: true }), serverFor(c, fake), context()),
          failsAs(expected, kind),
        );
      },
    );
  }

  t("a stream that ends cleanly before its end marker is broken, not a complete answer", async () => {
    await using fake = startFake(c);
    // A length finish rides on the last content chunk where the format allows it. What is cut off is the
    // rest: the final line, or the usage chunk and [DONE].
    fake.reply = () => cutShort(5);
    fake.streamFault = { after: 3, kind: "stall" };
    const stream = await adapter.stream(chatRequest({ stream: true }), serverFor(c, fake), context());
    const events: ChatEvent[] = [];
    const reading = (async () => {
      for await (const event of stream.events) events.push(event);
    })();
    await eventually(() => fake.chunksSent === 3, "the content was sent");
    // Closing the fake releases the stall and ends the body without an error: a clean, early EOF.
    await fake.close();
    await assert.rejects(reading, failsAs({ ...INVALID_ANSWER, message: /ended before/ }, "early EOF"));
    assert.equal(
      events.filter((e) => e.type === "done").length,
      0,
      "no done event, so no billing from zeros",
    );
  });

  t("a stream that goes silent past the idle timeout fails with 504 and closes the connection", async () => {
    await using fake = startFake(c);
    fake.reply = () => ({ content: "one two three" });
    fake.streamFault = { after: 1, kind: "stall" };
    const stream = await adapter.stream(
      chatRequest({ stream: true }),
      serverFor(c, fake),
      context({ idleTimeoutMs: 300 }),
    );
    const seen: string[] = [];
    await assert.rejects(
      async () => {
        for await (const event of stream.events) if (event.type === "delta") seen.push(event.content ?? "");
      },
      failsAs({ ...BACKEND_FAILED, status: 504, message: /^model server sent nothing for 300 ms$/ }, "stall"),
    );
    assert.deepEqual(seen, ["one "]);
    await eventually(() => fake.streamsCancelled === 1, "the backend saw its connection closed");
  });

  t("the idle timeout is per chunk: a slow but steady stream longer than it completes", async () => {
    await using fake = startFake(c);
    fake.reply = () => ({ content: "a b c d e f g h i j k l", promptTokens: 1, completionTokens: 12 });
    // 12 chunks 100 ms apart take well over the 800 ms allowed between two of them.
    fake.chunkDelayMs = 100;
    const stream = await adapter.stream(
      chatRequest({ stream: true }),
      serverFor(c, fake),
      context({ idleTimeoutMs: 800 }),
    );
    const got = await collect(stream);
    assert.equal(got.content, "a b c d e f g h i j k l");
    assert.equal(got.done?.completionTokens, 12);
  });

  t("abort() after the first event closes the backend's connection", async () => {
    await using fake = startFake(c);
    fake.reply = () => ({ content: Array.from({ length: 200 }, (_, i) => `w${i}`).join(" ") });
    fake.chunkDelayMs = 5;
    const stream = await adapter.stream(chatRequest({ stream: true }), serverFor(c, fake), context());
    const events = stream.events[Symbol.asyncIterator]();
    assert.equal((await events.next()).value?.type, "delta");
    stream.abort();
    await eventually(() => fake.streamsCancelled === 1, "the backend saw its connection closed");
    assert.equal(fake.streamsCompleted, 0);
    await events.return?.(undefined);
  });
});
