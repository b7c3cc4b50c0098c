import assert from "node:assert/strict";
import { listRouteFiles, MANIFEST_FILE, renderManifest } from "../lib/http/manifest.ts";
import { Scenario, USER_HELLO } from "./harness.ts";

const root = new URL("..", import.meta.url).pathname.replace(/\/$/, "");

const PATHS = {
  "/v1/chat/completions": "openai",
  "/api/v1/chat/completions": "openai",
  "/v1/chat/completions.php": "openai",
  "/api/v1/chat/completions.php": "openai",
  "/v1/chat.php": "ollama",
  "/api/v1/chat.php": "ollama",
} as const;

Deno.test("routes.gen.ts matches the files under routes/", async () => {
  const expected = renderManifest(await listRouteFiles(root));
  const actual = await Deno.readTextFile(`${root}/${MANIFEST_FILE}`);
  assert.equal(actual, expected, "routes.gen.ts is stale: run `deno task manifest`");
  const { manifest } = await import("../routes.gen.ts");
  assert.deepEqual(manifest.map((e) => e.path).sort(), Object.keys(PATHS).sort());
});

Deno.test("every public path answers POST in its own format", async () => {
  await using s = await Scenario.start([{ name: "a", models: [{ tag: "m1", alias: "nice" }] }]);
  const key = await s.gw.key();
  for (const [path, face] of Object.entries(PATHS)) {
    const res = await s.gw.post(path, key, { model: "x", messages: USER_HELLO });
    assert.equal(res.status, 200, path);
    const body = await res.json();
    if (face === "openai") assert.equal(body.object, "chat.completion", path);
    else assert.equal(body.model, "nice", path);
  }
});

Deno.test("other methods get 405 with Allow: POST and an error in the path's format", async () => {
  await using s = await Scenario.start();
  for (const [path, face] of Object.entries(PATHS)) {
    for (const method of ["GET", "PUT", "DELETE", "PATCH"]) {
      const res = await fetch(`${s.gw.url}${path}`, { method });
      assert.equal(res.status, 405, `${method} ${path}`);
      assert.equal(res.headers.get("allow"), "POST");
      assert.match(res.headers.get("content-type") ?? "", /application\/json/);
      const body = await res.json();
      assert.equal(body.error.code, "method_not_allowed");
      assert.equal(typeof body.error.message, "string");
      if (face === "ollama") assert.equal(body.error.type, "proxy_error");
      else assert.deepEqual(Object.keys(body.error).sort(), ["code", "message", "param", "type"]);
    }
  }
});

Deno.test("unknown paths get a JSON 404", async () => {
  await using s = await Scenario.start();
  for (const path of ["/", "/v1/models", "/api/chat", "/v1/chat/completions/extra"]) {
    const res = await s.gw.post(path, undefined, {});
    assert.equal(res.status, 404, path);
    const body = await res.json();
    assert.equal(body.error.code, "not_found");
  }
});
