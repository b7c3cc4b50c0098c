/**
 * The contract every backend adapter keeps, whatever its wire format: the same cases run against each adapter
 * in BACKENDS, called directly over real HTTP against its fake. Failover, billing and the faces rely on these
 * results and error classes, so an adapter that passes here can be routed to like any other. A new adapter
 * (or a new dialect of one) proves itself by being added to CASES.
 */
import { Reachability } from "../lib/backends/reachability.ts";
import assert from "node:assert/strict";
import { type BackendAdapter, BACKENDS, type CallContext } from "../lib/backends/mod.ts";
import type { EventStream } from "../lib/backends/stream_reading.ts";
import type { ChatDelta, ChatDone, ChatEvent, ChatRequest, ToolCall } from "../lib/chat/types.ts";
import {
  BackendFailure,
  BadGateway,
  GatewayError,
  ImageNotSupported,
  InvalidRequest,
} from "../lib/errors.ts";
import type { BackendKind, ServerRecord } from "../lib/store/records.ts";
import type { FakeBackend, FakeMode, StreamFault } from "./fakes/fake_backend.ts";
import { FakeOllama } from "./fakes/fake_ollama.ts";
import { FakeOpenAI } from "./fakes/fake_openai.ts";

const API_KEY = "sk-contract-7f3a";

interface BackendCase {
  name: string;
  kind: BackendKind;
  start(name: string): FakeBackend;
  /** Whether this kind sends the server's API key as a bearer token. */
  sendsApiKey: boolean;
}

const CASES: BackendCase[] = [
  { name: "ollama", kind: "ollama", start: (name) => FakeOllama.start(name), sendsApiKey: false },
  {
    name: "openai (vLLM, reasoning_content)",
    kind: "openai",
    // The fake insists on the key, as vLLM does with --api-key: every case below also proves it was sent.
    start: (name) => FakeOpenAI.start(name, { apiKey: API_KEY }),
    sendsApiKey: true,
  },
  {
    name: "openai (newer vLLM and llama.cpp, reasoning)",
    kind: "openai",
    start: (name) => FakeOpenAI.start(name, { apiKey: API_KEY, reasoningField: "reasoning" }),
    sendsApiKey: true,
  },
];

/** A fake that `await using` closes. */
function startFake(c: BackendCase): FakeBackend & AsyncDisposable {
  const fake = c.start("contract");
  return Object.assign(fake, { [Symbol.asyncDispose]: () => fake.close() });
}

function serverFor(c: BackendCase, fake: FakeBackend): ServerRecord {
  const at = new Date(0).toISOString();
  return {
    name: fake.name,
    url: fake.url,
    kind: c.kind,
    models: [{ tag: "m1" }],
    weight: 1,
    enabled: true,
    apiKey: API_KEY,
    createdAt: at,
    updatedAt: at,
  };
}

function chatRequest(overrides: Partial<ChatRequest> = {}): ChatRequest {
  return {
    model: "m1",
    messages: [{ role: "user", content: "hello there" }],
    stream: false,
    includeUsage: false,
    options: {},
    ...overrides,
  };
}

function context(overrides: Partial<CallContext> = {}): CallContext {
  return {
    fetch: globalThis.fetch,
    reach: new Reachability(),
    connectTimeoutMs: 2_000,
    firstByteTimeoutMs: 10_000,
    responseTimeoutMs: 10_000,
    idleTimeoutMs: 10_000,
    ...overrides,
  };
}

interface Collected {
  deltas: ChatDelta[];
  done?: ChatDone;
  content: string;
  thinking: string;
  toolCalls: ToolCall[];
}

async function collect(stream: EventStream): Promise<Collected> {
  const deltas: ChatDelta[] = [];
  let done: ChatDone | undefined;
  for await (const event of stream.events) {
    assert.equal(done, undefined, "nothing comes after the done event");
    if (event.type === "delta") deltas.push(event);
    else done = event;
  }
  return {
    deltas,
    done,
    content: deltas.map((d) => d.content ?? "").join(""),
    thinking: deltas.map((d) => d.thinking ?? "").join(""),
    toolCalls: deltas.flatMap((d) => d.toolCalls ?? []),
  };
}

interface Expected {
  type: abstract new (...args: never[]) => GatewayError;
  status: number;
  retryable: boolean;
  countsAgainstServer: boolean;
  message?: RegExp;
}

/** A validator for assert.rejects that says which property differs. */
function failsAs(expected: Expected, label: string) {
  return (error: unknown) => {
    assert.ok(error instanceof expected.type, `${label}: got ${error}`);
    assert.equal(error.status, expected.status, `${label}: status`);
    assert.equal(error.retryable, expected.retryable, `${label}: retryable`);
    assert.equal(error.countsAgainstServer, expected.countsAgainstServer, `${label}: countsAgainstServer`);
    if (expected.message) assert.match(error.message, expected.message, `${label}: message`);
    return true;
  };
}

async function eventually(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!condition()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const BACKEND_FAILED = { type: BackendFailure, status: 502, retryable: true, countsAgainstServer: true };
const INVALID_ANSWER = { type: BadGateway, status: 502, retryable: true, countsAgainstServer: true };

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
  ["hang", {
    type: BackendFailure,
    status: 504,
    retryable: true,
    countsAgainstServer: true,
    message: /timed out before answering/,
  }],
];

/** What a stream that breaks after it began must end with. */
const STREAM_FAULTS: [StreamFault["kind"], Expected][] = [
  ["crash", { ...BACKEND_FAILED, message: /broke off/ }],
  ["garbage", { ...INVALID_ANSWER, message: /malformed stream/ }],
  ["error-line", { ...BACKEND_FAILED, message: /reported an error: CUDA error: out of memory/ }],
];

const TOOLS = [
  { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } },
  { name: "get_time", parameters: { type: "object", properties: {} } },
];
const SCRIPTED_CALLS = [
  { name: "get_weather", arguments: { city: "Oslo", days: 3, units: { temp: "C", wind: ["m/s", "knots"] } } },
  { id: "call_fixed1", name: "get_time", arguments: {} },
];

function assertScriptedCalls(calls: ToolCall[], label: string) {
  assert.deepEqual(
    calls.map(({ name, arguments: args }) => ({ name, arguments: args })),
    SCRIPTED_CALLS.map(({ name, arguments: args }) => ({ name, arguments: args })),
    label,
  );
  assert.equal(calls[1].id, "call_fixed1", `${label}: the backend's call id is kept`);
}

Deno.test("every adapter in BACKENDS has a contract case", () => {
  assert.deepEqual(
    [...new Set(CASES.map((c) => c.kind))].sort(),
    Object.keys(BACKENDS).sort(),
  );
});

for (const c of CASES) {
  const adapter: BackendAdapter = BACKENDS[c.kind];
  const t = (name: string, fn: () => Promise<void>) => Deno.test(`contract, ${c.name}: ${name}`, fn);

  t("a plain answer, whole, with the backend's token counts", async () => {
    await using fake = startFake(c);
    fake.reply = () => ({ content: "Hello there, friend.", promptTokens: 7, completionTokens: 4 });
    const result = await adapter.chat(chatRequest(), serverFor(c, fake), context());
    assert.equal(result.content, "Hello there, friend.");
    assert.equal(result.thinking, undefined);
    assert.deepEqual(result.toolCalls, []);
    assert.equal(result.finishReason, "stop");
    assert.equal(result.promptTokens, 7);
    assert.equal(result.completionTokens, 4);
    assert.equal(result.model, "m1");
    assert.equal(fake.chats.length, 1);
    assert.equal(fake.last.model, "m1");
    assert.equal(fake.last.stream, false, "stream is sent explicitly");
    assert.deepEqual(fake.last.messages, [{ role: "user", content: "hello there" }]);
  });

  for (const includeUsage of [false, true]) {
    t(`a plain answer, streamed, counted by the backend (client includeUsage ${includeUsage})`, async () => {
      await using fake = startFake(c);
      fake.reply = () => ({ content: "one two three four", promptTokens: 9, completionTokens: 4 });
      const stream = await adapter.stream(
        chatRequest({ stream: true, includeUsage }),
        serverFor(c, fake),
        context(),
      );
      assert.equal(stream.model, "m1");
      const got = await collect(stream);
      assert.equal(got.content, "one two three four");
      assert.ok(got.deltas.length >= 4, `streamed in pieces, got ${got.deltas.length}`);
      // Billing needs the counts even when the client did not ask to see them.
      assert.deepEqual(got.done, {
        type: "done",
        finishReason: "stop",
        promptTokens: 9,
        completionTokens: 4,
      });
      assert.equal(fake.last.stream, true);
      assert.equal(fake.streamsCompleted, 1);
    });
  }

  t("finish reason length, whole and streamed, keeps the last piece of content", async () => {
    await using fake = startFake(c);
    fake.reply = () => ({
      content: "cut short here",
      doneReason: "length",
      promptTokens: 2,
      completionTokens: 3,
    });
    const whole = await adapter.chat(chatRequest(), serverFor(c, fake), context());
    assert.equal(whole.finishReason, "length");
    assert.equal(whole.content, "cut short here");
    const got = await collect(
      await adapter.stream(chatRequest({ stream: true }), serverFor(c, fake), context()),
    );
    assert.equal(got.content, "cut short here");
    assert.equal(got.done?.finishReason, "length");
    assert.equal(got.done?.completionTokens, 3);
  });

  t("reasoning comes back as thinking, whole and streamed, before the content", async () => {
    await using fake = startFake(c);
    fake.reply = () => ({ thinking: "The user greets me, so greet back.", content: "Hi there!" });
    const whole = await adapter.chat(chatRequest({ think: true }), serverFor(c, fake), context());
    assert.equal(whole.thinking, "The user greets me, so greet back.");
    assert.equal(whole.content, "Hi there!");
    const got = await collect(
      await adapter.stream(chatRequest({ stream: true, think: true }), serverFor(c, fake), context()),
    );
    assert.equal(got.thinking, "The user greets me, so greet back.");
    assert.equal(got.content, "Hi there!");
    const firstContent = got.deltas.findIndex((d) => d.content);
    const lastThinking = got.deltas.findLastIndex((d) => d.thinking);
    assert.ok(lastThinking >= 0 && lastThinking < firstContent, "thinking first, then content");
  });

  t("tool calls, whole: names, object arguments, ids, finish reason tool_calls", async () => {
    await using fake = startFake(c);
    fake.reply = () => ({ toolCalls: SCRIPTED_CALLS, promptTokens: 20, completionTokens: 12 });
    const result = await adapter.chat(chatRequest({ tools: TOOLS }), serverFor(c, fake), context());
    assertScriptedCalls(result.toolCalls, "whole");
    assert.equal(result.finishReason, "tool_calls");
    assert.equal(result.content, "");
    assert.equal(result.completionTokens, 12);
    assert.ok(Array.isArray(fake.last.tools) && fake.last.tools.length === 2, "the tools were offered");
  });

  t("tool calls, streamed: reassembled whole, finish reason tool_calls", async () => {
    await using fake = startFake(c);
    fake.reply = () => ({
      thinking: "Two tools.",
      toolCalls: SCRIPTED_CALLS,
      promptTokens: 20,
      completionTokens: 12,
    });
    const got = await collect(
      await adapter.stream(chatRequest({ stream: true, tools: TOOLS }), serverFor(c, fake), context()),
    );
    assertScriptedCalls(got.toolCalls, "streamed");
    assert.equal(got.thinking, "Two tools.");
    assert.deepEqual(got.done, {
      type: "done",
      finishReason: "tool_calls",
      promptTokens: 20,
      completionTokens: 12,
    });
  });

  t(`the server's API key is ${c.sendsApiKey ? "sent" : "not sent"} as a bearer token`, async () => {
    await using fake = startFake(c);
    await adapter.chat(chatRequest(), serverFor(c, fake), context());
    await collect(await adapter.stream(chatRequest({ stream: true }), serverFor(c, fake), context()));
    assert.equal(fake.chats.length, 2);
    for (const chat of fake.chats) {
      assert.equal(chat.headers.get("authorization"), c.sendsApiKey ? `Bearer ${API_KEY}` : null);
    }
  });

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
    // Three content chunks; a length finish rides on the last one where the format allows it. What is cut
    // off is the rest: the final line, or the usage chunk and [DONE].
    fake.reply = () => ({
      content: "cut short here",
      doneReason: "length",
      promptTokens: 5,
      completionTokens: 3,
    });
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
}
