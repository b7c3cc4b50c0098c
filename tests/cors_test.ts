/**
 * CORS decisions over plain HTTP: which origins may read an answer, for keys with and without a domain list
 * (wildcards and ports), for refusals, and with admin-configured origins. What every public path answers to a
 * preflight, and that its answers follow these rules, is tests/public_paths_test.ts; a real browser obeying
 * them, tests/browser_cors_test.ts.
 */
import assert from "node:assert/strict";
import { Scenario } from "./harness.ts";

const HELLO = { model: "x", messages: [{ role: "user", content: "hi" }] };

Deno.test("a key's domain list decides which origin may read its answers, refusals included", async () => {
  await using s = await Scenario.start();
  const key = await s.gw.key({ allowDomains: ["app.example.com", "*.example.org:8080"], rpm: 2 });
  for (const origin of ["https://app.example.com", "http://shop.example.org:8080"]) {
    const res = await s.gw.post("/v1/chat/completions", key, HELLO, { Origin: origin });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("access-control-allow-origin"), origin);
    assert.match(res.headers.get("vary") ?? "", /Origin/);
    assert.match(res.headers.get("access-control-expose-headers") ?? "", /X-RateLimit-Remaining/);
    await res.body?.cancel();
  }
  const limited = await s.gw.post("/v1/chat/completions", key, HELLO, { Origin: "https://app.example.com" });
  assert.equal(limited.status, 429);
  assert.equal(limited.headers.get("access-control-allow-origin"), "https://app.example.com");
  assert.match(limited.headers.get("access-control-expose-headers") ?? "", /Retry-After/);
  // A page's SDK reads it to stop retrying a quota only its reset lifts.
  assert.match(limited.headers.get("access-control-expose-headers") ?? "", /x-should-retry/);
  await limited.body?.cancel();

  const elsewhere = await s.gw.post("/v1/chat/completions", key, HELLO, {
    Origin: "https://evil.example.net",
  });
  assert.equal(elsewhere.status, 403);
  assert.equal(elsewhere.headers.get("access-control-allow-origin"), null);
  assert.match(elsewhere.headers.get("vary") ?? "", /Origin/);
  await elsewhere.body?.cancel();
});

Deno.test("keys without a list, and refusals without a key, expose answers only to configured origins", async () => {
  await using s = await Scenario.start([{ name: "a" }], {
    config: { corsOrigins: ["http://localhost:3000"] },
  });
  const key = await s.gw.key();
  const listed = await s.gw.post("/api/chat", key, { ...HELLO, stream: false }, {
    Origin: "http://localhost:3000",
  });
  assert.equal(listed.status, 200);
  assert.equal(listed.headers.get("access-control-allow-origin"), "http://localhost:3000");
  await listed.body?.cancel();
  const other = await s.gw.post("/api/chat", key, { ...HELLO, stream: false }, {
    Origin: "http://localhost:4000",
  });
  assert.equal(other.status, 200, "the request itself is not refused: only the page cannot read it");
  assert.equal(other.headers.get("access-control-allow-origin"), null);
  await other.body?.cancel();

  const keyless = await fetch(`${s.gw.url}/v1/models`, { headers: { Origin: "http://localhost:3000" } });
  assert.equal(keyless.status, 401);
  assert.equal(keyless.headers.get("access-control-allow-origin"), "http://localhost:3000");
  await keyless.body?.cancel();
  const stranger = await fetch(`${s.gw.url}/v1/models`, { headers: { Origin: "https://evil.example.net" } });
  assert.equal(stranger.headers.get("access-control-allow-origin"), null);
  await stranger.body?.cancel();

  const open = await Scenario.start([{ name: "b" }], { config: { corsOrigins: [] } });
  try {
    const unlisted = await open.gw.post("/v1/chat/completions", await open.gw.key(), HELLO, {
      Origin: "http://localhost:3000",
    });
    assert.equal(
      unlisted.headers.get("access-control-allow-origin"),
      null,
      "no origin is trusted by default",
    );
    await unlisted.body?.cancel();
  } finally {
    await open[Symbol.asyncDispose]();
  }
});
