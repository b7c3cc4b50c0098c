/**
 * The contract's failures before an answer: every way a backend can fail to answer (fault modes, a server
 * not listening, an image for a text-only model, no first byte in time) must reach failover as the same error
 * class with the same status, retryability and blame on the server, whatever the adapter.
 */
import assert from "node:assert/strict";
import type { FakeMode } from "../fakes/fake_backend.ts";
import { BackendFailure, ImageNotSupported, InvalidRequest } from "../../lib/errors.ts";
import {
  BACKEND_FAILED,
  chatRequest,
  context,
  eventually,
  type Expected,
  failsAs,
  forEachCase,
  INVALID_ANSWER,
  serverFor,
  startFake,
} from "./cases.ts";

/** Every fault mode that fails before an answer, and what failover must learn from it. */
const MODE_FAULTS: [FakeMode, Expected][] = [
  // The backend's message is not passed on: it can name internal addresses.
  ["error", { ...BACKEND_FAILED, message: /^model server failed with status 500$/ }],
  ["busy", { ...BACKEND_FAILED, message: /^model server failed with status 503$/ }],
  ["not-found", {
    type: BackendFailure,
    status: 502,
    retryable: true,
    countsAgainstServer: false,
    // The server's message is extracted from its error body, not passed on as raw JSON.
    message: /^model server does not have the model \([^{}]+\)$/,
  }],
  ["reject", {
    type: InvalidRequest,
    status: 400,
    retryable: false,
    countsAgainstServer: false,
    message: /^The model server rejected the request: [^{}]+$/,
  }],
  ["garbage", INVALID_ANSWER],
  ["malformed", INVALID_ANSWER],
  // Given up at the context's bound (1 MB): an answer read whole, or the first event of a stream.
  ["flood", { ...INVALID_ANSWER, message: /larger than 1000000 bytes$/ }],
  ["hang", {
    type: BackendFailure,
    status: 504,
    retryable: true,
    countsAgainstServer: true,
    message: /timed out before answering/,
  }],
];

forEachCase((c, adapter, t) => {
  for (const [mode, expected] of MODE_FAULTS) {
    t(`mode ${mode} is classified for failover, whole and streamed`, async () => {
      await using fake = startFake(c);
      fake.mode = mode;
      const ctx = context({ firstByteTimeoutMs: 300 });
      await assert.rejects(adapter.chat(chatRequest(), serverFor(c, fake), ctx), failsAs(expected, "whole"));
      await assert.rejects(
        adapter.stream(chatRequest({ stream: true }), serverFor(c, fake), ctx),
        failsAs(expected, "streamed"),
      );
      assert.equal(fake.chats.length, 2, "the server was really asked");
    });
  }

  t(
    "a server that is not listening is unreachable, whole and streamed; back again once it listens",
    async () => {
      await using fake = startFake(c);
      await fake.pause();
      const expected = { ...BACKEND_FAILED, message: /^could not reach the model server$/ };
      await assert.rejects(
        adapter.chat(chatRequest(), serverFor(c, fake), context()),
        failsAs(expected, "whole"),
      );
      await assert.rejects(
        adapter.stream(chatRequest({ stream: true }), serverFor(c, fake), context()),
        failsAs(expected, "streamed"),
      );
      fake.resume();
      assert.equal(
        (await adapter.chat(chatRequest(), serverFor(c, fake), context())).content,
        "Hello from contract",
      );
    },
  );

  t(
    "an image sent to a text-only model is ImageNotSupported, whole and streamed; text still works",
    async () => {
      await using fake = startFake(c);
      fake.mode = "text-only";
      const withImage = (stream: boolean) =>
        chatRequest({
          stream,
          messages: [{ role: "user", content: "what is this?", images: ["iVBORw0KGgo="] }],
        });
      const expected = {
        type: ImageNotSupported,
        status: 503,
        retryable: false,
        countsAgainstServer: false,
      };
      await assert.rejects(
        adapter.chat(withImage(false), serverFor(c, fake), context()),
        failsAs(expected, "whole"),
      );
      await assert.rejects(
        adapter.stream(withImage(true), serverFor(c, fake), context()),
        failsAs(expected, "streamed"),
      );
      assert.equal(JSON.stringify(fake.chats[0].body).includes("iVBORw0KGgo="), true, "the image was sent");
      const text = await adapter.chat(chatRequest(), serverFor(c, fake), context());
      assert.equal(text.content, "Hello from contract");
    },
  );

  t("an answer that never ends is given up at the size bound and its connection closed", async () => {
    await using fake = startFake(c);
    fake.mode = "flood";
    await assert.rejects(
      adapter.chat(chatRequest(), serverFor(c, fake), context()),
      /larger than 1000000 bytes/,
    );
    await eventually(() => fake.streamsCancelled === 1, "the backend saw its connection closed");
    const sent = fake.floodBytesSent;
    // What the gateway read, plus what socket buffers took in before the close.
    assert.ok(sent > 1_000_000 && sent < 16_000_000, `${sent} bytes sent`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(fake.floodBytesSent, sent, "nothing more is sent once the connection is closed");
  });

  t("the first-byte timeout bounds a server that never answers", async () => {
    await using fake = startFake(c);
    fake.mode = "hang";
    const ctx = context({ firstByteTimeoutMs: 200, idleTimeoutMs: 60_000, responseTimeoutMs: 60_000 });
    const expected = { ...BACKEND_FAILED, status: 504, message: /timed out before answering/ };
    await assert.rejects(adapter.chat(chatRequest(), serverFor(c, fake), ctx), failsAs(expected, "whole"));
    await assert.rejects(
      adapter.stream(chatRequest({ stream: true }), serverFor(c, fake), ctx),
      failsAs(expected, "streamed"),
    );
  });
});
