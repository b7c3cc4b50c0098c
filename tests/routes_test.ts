/**
 * The route manifest against routes/, the island bundle against its sources, and paths no route serves. What
 * each public path of the manifest answers (its format, other methods, CORS) is tests/public_paths_test.ts.
 */
import assert from "node:assert/strict";
import { listRouteFiles, MANIFEST_FILE, renderManifest } from "../lib/server/manifest.ts";
import { Scenario } from "./harness.ts";

const root = new URL("..", import.meta.url).pathname.replace(/\/$/, "");

Deno.test("routes.gen.ts matches the files under routes/", async () => {
  const expected = renderManifest(await listRouteFiles(root));
  const actual = await Deno.readTextFile(`${root}/${MANIFEST_FILE}`);
  assert.equal(actual, expected, "routes.gen.ts is stale: run `deno task manifest`");
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
