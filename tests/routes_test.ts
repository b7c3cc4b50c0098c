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
  "/api/chat": "ollama_api",
} as const;

/** Discovery and the rest of Ollama's surface (tests/discovery_test.ts, tests/ollama_paths_test.ts). */
const DISCOVERY_PATHS = [
  "/",
  "/v1/models",
  "/v1/models/:id{.+}",
  "/api/v1/models",
  "/api/v1/models/:id{.+}",
  "/api/tags",
  "/api/show",
  "/api/version",
  ...["generate", "embed", "embeddings", "pull", "push", "create", "delete", "copy", "ps"].map((e) =>
    `/api/${e}`
  ),
];

/** The admin side: GET only, JSON errors in format A's shape. */
const ADMIN_PATHS = {
  "/admin": "GET",
  "/admin/feed": "GET",
  "/admin/status": "GET",
  "/admin/login": "POST",
  "/admin/logout": "POST",
  "/metrics": "GET",
  "/admin/keys": "GET, POST",
  "/admin/servers": "GET, POST",
  "/admin/users": "GET, POST",
  "/admin/audit": "GET",
} as const;

Deno.test("routes.gen.ts matches the files under routes/", async () => {
  const expected = renderManifest(await listRouteFiles(root));
  const actual = await Deno.readTextFile(`${root}/${MANIFEST_FILE}`);
  assert.equal(actual, expected, "routes.gen.ts is stale: run `deno task manifest`");
  const { manifest } = await import("../routes.gen.ts");
  assert.deepEqual(
    manifest.map((e) => e.path).sort(),
    [...Object.keys(PATHS), ...Object.keys(ADMIN_PATHS), ...DISCOVERY_PATHS].sort(),
  );
});

Deno.test("the committed island bundle is what `deno task bundle` builds from the sources", async () => {
  const out = await Deno.makeTempFile({ suffix: ".js" });
  try {
    const task = JSON.parse(await Deno.readTextFile(`${root}/deno.json`)).tasks.bundle as string;
    const args = task.split(" ").slice(1).map((a) => a === "static/bundle/islands.js" ? out : a);
    const built = await new Deno.Command(Deno.execPath(), {
      args,
      cwd: root,
      stdout: "null",
      stderr: "piped",
    }).output();
    assert.equal(built.code, 0, new TextDecoder().decode(built.stderr));
    const fresh = await Deno.readTextFile(out);
    const committed = await Deno.readTextFile(`${root}/static/bundle/islands.js`);
    assert.ok(fresh === committed, "static/bundle/islands.js is stale: run `deno task bundle`");
  } finally {
    await Deno.remove(out);
  }
});

Deno.test("every public path answers POST in its own format", async () => {
  await using s = await Scenario.start([{ name: "a", models: [{ tag: "m1", alias: "nice" }] }]);
  const key = await s.gw.key();
  for (const [path, face] of Object.entries(PATHS)) {
    // /api/chat streams unless told otherwise, as Ollama does; the others answer whole by default.
    const res = await s.gw.post(path, key, { model: "x", messages: USER_HELLO, stream: false });
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
      if (face === "ollama_api") {
        // Ollama's own error shape: the message is `error` itself.
        assert.equal(body.code, "method_not_allowed");
        assert.match(body.error, /not allowed/);
        continue;
      }
      assert.equal(body.error.code, "method_not_allowed");
      assert.equal(typeof body.error.message, "string");
      if (face === "ollama") assert.equal(body.error.type, "proxy_error");
      else assert.deepEqual(Object.keys(body.error).sort(), ["code", "message", "param", "type"]);
    }
  }
});

Deno.test("unknown paths get a JSON 404", async () => {
  await using s = await Scenario.start();
  for (const path of ["/v2/models", "/v1", "/v1/chat/completions/extra", "/api/v1/tags"]) {
    const res = await s.gw.post(path, undefined, {});
    assert.equal(res.status, 404, path);
    const body = await res.json();
    assert.equal(body.error.code, "not_found");
  }
  // Under Ollama's /api/, in Ollama's shape, naming what the gateway serves.
  for (const path of ["/api/blobs/sha256:abc", "/api/experimental/x"]) {
    const res = await s.gw.post(path, undefined, {});
    assert.equal(res.status, 404, path);
    const body = await res.json();
    assert.equal(body.code, "not_found");
    assert.match(body.error, /POST \/api\/chat/);
  }
});
