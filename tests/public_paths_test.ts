/**
 * Every public path of the route manifest (a route that serves clients, web pages among them, says so with
 * `cors`), held to the same promises in one table: a CORS preflight allows its methods and the headers asked
 * for, to any origin; its real answer, in its own format, is readable by an origin the key's domain list
 * admits and by no other; its error answers (no key, a method it does not take) are in its format and
 * readable by an origin the admin listed; and nothing it says, body or header, names a backend server, its
 * address or port, or a model the key is not bound to. A path added to routes/ without a row in
 * tests/support/public_path_rows.ts fails the first test. The admin side answers no preflight. How a real
 * browser obeys these answers is tests/browser_cors_test.ts; the finer CORS rules (wildcard domains,
 * refusals, configured origins) are tests/cors_test.ts.
 */
import assert from "node:assert/strict";
import { manifest } from "../routes.gen.ts";
import type { RouteFace } from "../lib/faces/mod.ts";
import { Scenario } from "./harness.ts";
import { type Json, PUBLIC } from "./support/public_path_rows.ts";

const SERVERS = [
  { name: "gpu-secret-1", models: [{ tag: "llama3.2:3b", alias: "house-model" }, { tag: "qwen3:8b" }] },
  { name: "gpu-secret-2", models: [{ tag: "phi4:14b" }] },
];
/** The key's site, an origin the admin listed for requests without a key's list, and a stranger. */
const APP = "https://app.example.com";
const LISTED = "https://listed.example.net";
const STRANGER = "https://evil.example.org";

/** The admin side: for the operator and the admin page, never for other sites. */
const ADMIN_PATHS = [
  "/admin",
  "/admin/feed",
  "/admin/status",
  "/admin/login",
  "/admin/logout",
  "/admin/metrics",
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
    for (const { what, res, raw: answered } of seen) {
      // The gateway's own address is no secret: an Ollama client given the wrong base URL is told it.
      const raw = answered.replaceAll(s.gw.url, "<gateway>");
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
