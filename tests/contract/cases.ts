/**
 * The contract every backend adapter keeps, whatever its wire format: the same cases run against each adapter
 * in BACKENDS, called directly over real HTTP against its fake. Failover, billing and the faces rely on these
 * results and error classes, so an adapter that passes here can be routed to like any other. A new adapter
 * (or a new dialect of one) proves itself by being added to CASES; the contract's test files take every case
 * from here, so none of them can leave one out. Not a test module itself: each test module that imports it
 * evaluates it anew, so a test registered here would run once per importer.
 */
import { Reachability } from "../../lib/backends/reachability.ts";
import assert from "node:assert/strict";
import { type BackendAdapter, BACKENDS, type CallContext } from "../../lib/backends/mod.ts";
import type { EventStream } from "../../lib/backends/stream_reading.ts";
import type { ChatDelta, ChatDone, ChatRequest, ToolCall } from "../../lib/chat/types.ts";
import { BackendFailure, BadGateway, type GatewayError } from "../../lib/errors.ts";
import type { BackendKind, ServerRecord } from "../../lib/store/records.ts";
import type { FakeBackend, ScriptedReply } from "../fakes/fake_backend.ts";
import { FakeOllama } from "../fakes/fake_ollama.ts";
import { FakeOpenAI } from "../fakes/fake_openai.ts";

export const API_KEY = "sk-contract-7f3a";

export interface BackendCase {
  name: string;
  kind: BackendKind;
  start(name: string): FakeBackend;
  /** Whether this kind sends the server's API key as a bearer token. */
  sendsApiKey: boolean;
}

export const CASES: BackendCase[] = [
  { name: "ollama", kind: "ollama", start: (name) => FakeOllama.start(name), sendsApiKey: false },
  {
    name: "openai (vLLM, reasoning_content)",
    kind: "openai",
    // The fake insists on the key, as vLLM does with --api-key: every case also proves it was sent.
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

/** Registers a test named after the case it runs against. */
export type CaseTest = (name: string, fn: () => Promise<void>) => void;

/** Defines a file's tests once for every case, each run against that case's adapter. */
export function forEachCase(define: (c: BackendCase, adapter: BackendAdapter, t: CaseTest) => void): void {
  for (const c of CASES) {
    const adapter: BackendAdapter = BACKENDS[c.kind];
    define(c, adapter, (name, fn) => Deno.test(`contract, ${c.name}: ${name}`, fn));
  }
}

/** A fake that `await using` closes. */
export function startFake(c: BackendCase): FakeBackend & AsyncDisposable {
  const fake = c.start("contract");
  return Object.assign(fake, { [Symbol.asyncDispose]: () => fake.close() });
}

export function serverFor(c: BackendCase, fake: FakeBackend): ServerRecord {
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

export function chatRequest(overrides: Partial<ChatRequest> = {}): ChatRequest {
  return {
    model: "m1",
    messages: [{ role: "user", content: "hello there" }],
    stream: false,
    includeUsage: false,
    options: {},
    ...overrides,
  };
}

export function context(overrides: Partial<CallContext> = {}): CallContext {
  return {
    reach: new Reachability(),
    connectTimeoutMs: 2_000,
    firstByteTimeoutMs: 10_000,
    responseTimeoutMs: 10_000,
    idleTimeoutMs: 10_000,
    maxAnswerBytes: 1_000_000,
    ...overrides,
  };
}

/**
 * An answer the token limit cut off: three content pieces, finish reason length. Three, so a stream can be
 * broken right after the content and before what would have ended it.
 */
export function cutShort(promptTokens: number): ScriptedReply {
  return { content: "cut short here", doneReason: "length", promptTokens, completionTokens: 3 };
}

export interface Collected {
  deltas: ChatDelta[];
  done?: ChatDone;
  content: string;
  thinking: string;
  toolCalls: ToolCall[];
}

export async function collect(stream: EventStream): Promise<Collected> {
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

export interface Expected {
  type: abstract new (...args: never[]) => GatewayError;
  status: number;
  retryable: boolean;
  countsAgainstServer: boolean;
  message?: RegExp;
}

/** A validator for assert.rejects that says which property differs. */
export function failsAs(expected: Expected, label: string) {
  return (error: unknown) => {
    assert.ok(error instanceof expected.type, `${label}: got ${error}`);
    assert.equal(error.status, expected.status, `${label}: status`);
    assert.equal(error.retryable, expected.retryable, `${label}: retryable`);
    assert.equal(error.countsAgainstServer, expected.countsAgainstServer, `${label}: countsAgainstServer`);
    if (expected.message) assert.match(error.message, expected.message, `${label}: message`);
    return true;
  };
}

export async function eventually(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!condition()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export const BACKEND_FAILED = {
  type: BackendFailure,
  status: 502,
  retryable: true,
  countsAgainstServer: true,
};
export const INVALID_ANSWER = { type: BadGateway, status: 502, retryable: true, countsAgainstServer: true };
