/**
 * Every public path of the route manifest (a route that serves clients, web pages among them, says so with
 * `cors`), held to the same promises in one table: a CORS preflight allows its methods and the headers asked
 * for, to any origin; its real answer, in its own format, is readable by an origin the key's domain list
 * admits and by no other; its error answers (no key, a method it does not take) are in its format and
 * readable by an origin the admin listed; and nothing it says, body or header, names a backend server, its
 * address or port, or a model the key is not bound to. A path added to routes/ without a row here fails the
 * first test. The admin side answers no preflight. How a real browser obeys these answers is
 * tests/browser_cors_test.ts; the finer CORS rules (wildcard domains, refusals, configured origins) are
 * tests/cors_test.ts.
 */
import assert from "node:assert/strict";
import { manifest } from "../routes.gen.ts";
import type { RouteFace } from "../lib/faces/mod.ts";
import { Scenario, USER_HELLO } from "./harness.ts";

const SERVERS = [
  { name: "gpu-secret-1", models: [{ tag: "llama3.2:3b", alias: "house-model" }, { tag: "qwen3:8b" }] },
  { name: "gpu-secret-2", models: [{ tag: "phi4:14b" }] },
];
/** The key's site, an origin the admin listed for requests without a key's list, and a stranger. */
const APP = "https://app.example.com";
const LISTED = "https://listed.example.net";
const STRANGER = "https://evil.example.org";

type Json = Record<string, unknown>;

interface Row {
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

/** One row per public path of the manifest, by the manifest's own path. */
const PUBLIC: Record<string, Row> = {
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
    ["generate", "embed", "embeddings", "pull", "push", "create", "delete", "copy", "ps"]
      .map((e) => [`/api/${e}`, notServed(`/api/${e}`)]),
  ),
};

/** The admin side: for the operator and the admin page, never for other sites. */
const ADMIN_PATHS = [
  "/admin",
  "/admin/feed",
  "/admin/status",
  "/admin/login",
  "/admin/logout",
  "/metrics",
  "/admin/keys",
  "/admin/servers",
  "/admin/users",
  "/admin/audit",
  "/admin/api/commands",
  "/admin/api/openapi.json",
];

/** An error's code, after checking the body has the error shape of the path's format. */
function errorCode(face: RouteFace, body: Json): string {
  if (face === "ollama_api") {
    // Ollama's own shape: the message is `error` itself.
    assert.deepEqual(Object.keys(body).sort(), ["code", "error"]);
    assert.equal(typeof body.error, "string");
    return String(body.code);
  }
  const error = body.error as Json;
  assert.equal(typeof error?.message, "string");
  if (face === "anthropic") {
    assert.deepEqual(Object.keys(body).sort(), ["error", "type"]);
    assert.deepEqual(Object.keys(error).sort(), ["details", "message", "type"]);
    return String((error.details as Json).error_code);
  }
  if (face === "openai" || face === "responses") {
    assert.deepEqual(Object.keys(error).sort(), ["code", "message", "param", "type"]);
  } else assert.equal(error.type, "proxy_error");
  return String(error.code);
}

/** The body as JSON; a text body (Ollama's root) as `{ text }`. */
async function read(res: Response): Promise<{ json: Json; raw: string }> {
  const raw = await res.text();
  if (!raw || !/json/.test(res.headers.get("content-type") ?? "")) return { json: { text: raw }, raw };
  return { json: JSON.parse(raw), raw };
}

const publicEntries = manifest.filter((e) => e.module.cors);

Deno.test("the manifest's paths are this table's public paths and the admin paths", () => {
  assert.deepEqual(publicEntries.map((e) => e.path).sort(), Object.keys(PUBLIC).sort());
  assert.deepEqual(
    manifest.filter((e) => !e.module.cors).map((e) => e.path).sort(),
    [...ADMIN_PATHS].sort(),
  );
});

for (const { path, module } of publicEntries) {
  const row = PUBLIC[path];
  if (!row) continue;
  Deno.test(`public path ${path}: preflight, real answer, error answers, nothing about backends`, async () => {
    await using s = await Scenario.start(SERVERS, { config: { corsOrigins: [LISTED] } });
    for (const fake of s.fakes.values()) fake.reply = () => ({ content: "fine" });
    await s.gw.deps.prober!.probeNow();
    const key = await s.gw.key({ model: "llama3.2:3b", allowDomains: ["app.example.com"] });
    const allow = Object.keys(module.handlers(s.gw.deps));
    const seen: { what: string; res: Response; raw: string }[] = [];
    const send = async (what: string, method: string, headers: Record<string, string>, body?: Json) => {
      const res = await fetch(`${s.gw.url}${row.url}`, {
        method,
        headers: { ...(body ? { "Content-Type": "application/json" } : {}), ...headers },
        body: body ? JSON.stringify(body) : undefined,
      });
      const { json, raw } = await read(res);
      seen.push({ what, res, raw });
      return { res, json };
    };
    const auth = { Authorization: `Bearer ${key}` };

    // The preflight: no key comes with it, so it allows the path's methods and the asked headers to anyone.
    const preflight = await send("preflight", "OPTIONS", {
      Origin: APP,
      "Access-Control-Request-Method": row.method,
      "Access-Control-Request-Headers": "authorization, content-type",
    });
    assert.equal(preflight.res.status, 204);
    assert.equal(preflight.res.headers.get("access-control-allow-origin"), APP);
    assert.equal(preflight.res.headers.get("access-control-allow-methods"), allow.join(", "));
    assert.equal(preflight.res.headers.get("access-control-allow-headers"), "authorization, content-type");
    assert.equal(preflight.res.headers.get("access-control-allow-credentials"), null);
    assert.equal(preflight.res.headers.get("allow"), [...allow, "OPTIONS"].join(", "));
    assert.ok(allow.includes(row.method), `${row.method} is among ${allow}`);
    assert.equal(seen.at(-1)!.raw, "");

    // The real answer, to the key's own site: readable there.
    const real = await send("real answer", row.method, { ...auth, Origin: APP }, row.body);
    assert.equal(real.res.status, row.status, JSON.stringify(real.json));
    row.check(real.json);
    assert.equal(real.res.headers.get("access-control-allow-origin"), APP);
    assert.match(real.res.headers.get("vary") ?? "", /Origin/);
    assert.match(real.res.headers.get("access-control-expose-headers") ?? "", /Retry-After/);
    if (row.status >= 400) errorCode(module.face, real.json);
    if (allow.includes("HEAD")) {
      const head = await send("HEAD", "HEAD", { ...auth, Origin: APP });
      assert.equal(head.res.status, row.status);
      assert.equal(seen.at(-1)!.raw, "");
    }

    // A stranger's page cannot read it (a key with a domain list refuses it outright where a key is needed).
    const stranger = await send("stranger", row.method, { ...auth, Origin: STRANGER }, row.body);
    assert.equal(stranger.res.headers.get("access-control-allow-origin"), null);
    assert.match(stranger.res.headers.get("vary") ?? "", /Origin/);
    if (row.keyed) {
      assert.equal(stranger.res.status, 403);
      assert.equal(errorCode(module.face, stranger.json), "forbidden");
    }

    // No key: 401 in the path's format, readable by the origin the admin listed.
    if (row.keyed) {
      const anonymous = await send("no key", row.method, { Origin: LISTED }, row.body);
      assert.equal(anonymous.res.status, 401);
      assert.equal(errorCode(module.face, anonymous.json), "invalid_api_key");
      assert.equal(anonymous.res.headers.get("access-control-allow-origin"), LISTED);
      const wrong = await send("wrong key", row.method, { Authorization: "Bearer gwk_wrong" }, row.body);
      assert.equal(wrong.res.status, 401);
      assert.equal(errorCode(module.face, wrong.json), "invalid_api_key");
    }

    // Each method the path does not take: 405 with Allow, in the path's format.
    for (const other of ["GET", "POST", "PUT", "DELETE", "PATCH"].filter((m) => !allow.includes(m))) {
      const refused = await send(other, other, { ...auth, Origin: APP });
      assert.equal(refused.res.status, 405, other);
      assert.equal(refused.res.headers.get("allow"), allow.join(", "));
      assert.match(refused.res.headers.get("content-type") ?? "", /application\/json/);
      assert.equal(errorCode(module.face, refused.json), "method_not_allowed");
      assert.equal(refused.res.headers.get("access-control-allow-origin"), APP);
    }

    // Nothing names a backend: no server name, address or port, no model the key is not bound to.
    const ports = [...s.fakes.values()].map((f) => new URL(f.url).port);
    const secrets = ["gpu-secret", "127.0.0.1", "qwen3", "phi4", ...ports.map((p) => `:${p}`)];
    for (const { what, res, raw } of seen) {
      const headers = [...res.headers].map(([name, value]) => `${name}: ${value}`).join("\n");
      for (const secret of secrets) {
        assert.ok(!raw.includes(secret), `${what}: the body names ${secret}: ${raw}`);
        assert.ok(!headers.includes(secret), `${what}: a header names ${secret}: ${headers}`);
      }
      const port = ports.find((p) => new RegExp(`\\b${p}\\b`).test(raw + headers));
      assert.equal(port, undefined, `${what}: a backend's port: ${raw}`);
    }
  });
}

Deno.test("the admin side answers no preflight, so no other site may call it", async () => {
  await using s = await Scenario.start();
  for (const path of ADMIN_PATHS) {
    const res = await fetch(`${s.gw.url}${path}`, {
      method: "OPTIONS",
      headers: { Origin: APP, "Access-Control-Request-Method": "GET" },
    });
    assert.equal(res.status, 405, path);
    assert.equal(res.headers.get("access-control-allow-origin"), null, path);
    await res.body?.cancel();
  }
});
