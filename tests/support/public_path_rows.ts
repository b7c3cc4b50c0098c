/**
 * @module What each public path of the route manifest answers: one row per path, with the request that gets
 * its real answer, whether it needs a key, and what that answer says.
 */
import assert from "node:assert/strict";
import { USER_HELLO } from "../harness.ts";

export type Json = Record<string, unknown>;

export interface Row {
  /** The request that gets the path's real answer. */
  url: string;
  method: "GET" | "POST";
  body?: Json;
  /** Whether the path needs a key; without one it answers 401. */
  keyed: boolean;
  status: number;
  /** What the real answer says. */
  check(body: Json): void;
}

/** A chat path answers in its format: A (chat completions) or B (Ollama's, with the model's alias). */
const chat = (url: string, format: "A" | "B"): Row => ({
  url,
  method: "POST",
  // /api/chat streams unless told otherwise, as Ollama does; the others answer whole by default.
  body: { model: "x", messages: USER_HELLO, stream: false },
  keyed: true,
  status: 200,
  check: (body) => {
    if (format === "A") {
      assert.equal(body.object, "chat.completion");
      assert.equal((body.choices as { message: Json }[])[0].message.content, "fine");
    } else {
      assert.equal(body.model, "house-model");
      assert.equal((body.message as Json).content, "fine");
    }
  },
});

/** The Responses API answers a Response object. */
const responses = (url: string): Row => ({
  url,
  method: "POST",
  body: { model: "x", input: "hello there" },
  keyed: true,
  status: 200,
  check: (body) => {
    assert.equal(body.object, "response");
    assert.equal(body.status, "completed");
    assert.equal(((body.output as Json[])[0].content as Json[])[0].text, "fine");
  },
});

/** Anthropic's Messages API answers a message object. */
const messages = (url: string): Row => ({
  url,
  method: "POST",
  body: { model: "x", max_tokens: 64, messages: USER_HELLO },
  keyed: true,
  status: 200,
  check: (body) => {
    assert.equal(body.type, "message");
    assert.deepEqual(body.content, [{ type: "text", text: "fine" }]);
  },
});

/** Its token count is the gateway's estimate, said to be one. */
const countTokens = (url: string): Row => ({
  url,
  method: "POST",
  body: { model: "x", messages: USER_HELLO },
  keyed: true,
  status: 200,
  check: (body) => assert.deepEqual(body, { input_tokens: 3, estimated: true }),
});

const modelList = (url: string): Row => ({
  url,
  method: "GET",
  keyed: true,
  status: 200,
  check: (body) => assert.deepEqual((body.data as Json[]).map((m) => m.id), ["llama3.2:3b"]),
});

const modelObject = (url: string): Row => ({
  url,
  method: "GET",
  keyed: true,
  status: 200,
  check: (body) => assert.equal(body.id, "llama3.2:3b"),
});

/** Ollama endpoints the gateway does not serve: their answer, to any method and without a key, is a 404. */
const notServed = (url: string): Row => ({
  url,
  method: "POST",
  body: {},
  keyed: false,
  status: 404,
  check: (body) => assert.match(String(body.error), /is not available through this gateway/),
});

/** An Ollama client given an OpenAI base URL: a 404 without a key, naming the gateway's root as its host. */
const wrongBase = (url: string, openaiBase: string): Row => ({
  url,
  method: "POST",
  body: { model: "x", messages: USER_HELLO },
  keyed: false,
  status: 404,
  check: (body) => {
    const root = String(body.error).match(/set its host to (http:\/\/[^ ]+) /)?.[1];
    assert.match(String(root), /^http:\/\/127\.0\.0\.1:\d+$/, String(body.error));
    assert.ok(String(body.error).startsWith(`${root}${openaiBase} is the gateway's OpenAI base URL`));
  },
});

/** One row per public path of the manifest, by the manifest's own path. */
export const PUBLIC: Record<string, Row> = {
  "/v1/chat/completions": chat("/v1/chat/completions", "A"),
  "/api/v1/chat/completions": chat("/api/v1/chat/completions", "A"),
  "/v1/chat/completions.php": chat("/v1/chat/completions.php", "A"),
  "/api/v1/chat/completions.php": chat("/api/v1/chat/completions.php", "A"),
  "/v1/chat.php": chat("/v1/chat.php", "B"),
  "/api/v1/chat.php": chat("/api/v1/chat.php", "B"),
  "/api/chat": chat("/api/chat", "B"),
  "/v1/responses": responses("/v1/responses"),
  "/api/v1/responses": responses("/api/v1/responses"),
  "/v1/messages": messages("/v1/messages"),
  "/api/v1/messages": messages("/api/v1/messages"),
  "/v1/messages/count_tokens": countTokens("/v1/messages/count_tokens"),
  "/api/v1/messages/count_tokens": countTokens("/api/v1/messages/count_tokens"),
  "/v1/models": modelList("/v1/models"),
  "/api/v1/models": modelList("/api/v1/models"),
  "/v1/models/:id{.+}": modelObject("/v1/models/llama3.2:3b"),
  "/api/v1/models/:id{.+}": modelObject("/api/v1/models/llama3.2:3b"),
  "/api/tags": {
    url: "/api/tags",
    method: "GET",
    keyed: true,
    status: 200,
    check: (body) => assert.deepEqual((body.models as Json[]).map((m) => m.name), ["house-model"]),
  },
  "/api/show": {
    url: "/api/show",
    method: "POST",
    body: { model: "house-model" },
    keyed: true,
    status: 200,
    check: (body) => assert.deepEqual(body.capabilities, ["completion"]),
  },
  "/api/ps": {
    url: "/api/ps",
    method: "GET",
    keyed: true,
    status: 200,
    // Listed only while a server holds it loaded (tests/ollama_clients_test.ts); never another model.
    check: (body) => {
      assert.ok(Array.isArray(body.models));
      for (const m of body.models as Json[]) assert.equal(m.name, "house-model");
    },
  },
  "/v1/api/:path{.+}": wrongBase("/v1/api/chat", "/v1"),
  "/api/v1/api/:path{.+}": wrongBase("/api/v1/api/tags", "/api/v1"),
  "/api/version": {
    url: "/api/version",
    method: "GET",
    keyed: false,
    status: 200,
    check: (body) => assert.match(String(body.version), /^\d+\.\d+\.\d+$/),
  },
  "/": {
    url: "/",
    method: "GET",
    keyed: false,
    status: 200,
    check: (body) => assert.equal(body.text, "Ollama is running"),
  },
  ...Object.fromEntries(
    ["generate", "embed", "embeddings", "pull", "push", "create", "delete", "copy"]
      .map((e) => [`/api/${e}`, notServed(`/api/${e}`)]),
  ),
};
