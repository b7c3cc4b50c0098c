import assert from "node:assert/strict";
import { FakeOllama } from "./fakes/fake_ollama.ts";
import { record, setup } from "./support/health_probes.ts";
import { eventually } from "./support/wait_for.ts";
import { HealthProber } from "../lib/routing/health.ts";
import { ServerState } from "../lib/routing/server_state.ts";

Deno.test("health: a dead Ollama server is taken out and brought back on the same address", async () => {
  const fake = FakeOllama.start("a");
  try {
    const { state, prober, one } = setup([record("a", fake.url)]);
    await prober.probeNow();
    assert.equal(one("a").health, "up");
    assert.equal(state.isRoutable("a", "m1"), true);

    await fake.pause();
    await prober.probeNow();
    assert.equal(one("a").health, "down");
    assert.equal(one("a").breaker, "open");
    assert.equal(one("a").lastProbeError, "connection refused");
    assert.equal(state.isRoutable("a", "m1"), false);
    assert.equal(state.begin("a"), undefined);
    const port = new URL(fake.url).port;
    assert.ok(!JSON.stringify(state.status()).includes(port), "status must not carry the address");

    fake.resume();
    await prober.probeNow();
    assert.equal(one("a").health, "up");
    assert.equal(one("a").lastProbeError, undefined);
    assert.equal(one("a").breaker, "half-open", "no need to wait out the open period after a restart");
    const trial = state.begin("a");
    assert.ok(trial);
    assert.equal(state.begin("a"), undefined);
    state.finish(trial, "ok");
    assert.equal(one("a").breaker, "closed");
  } finally {
    await fake.close();
  }
});

Deno.test("health: Ollama discovery from /api/tags and /api/ps, matching :latest either way", async () => {
  const fake = FakeOllama.start("a");
  try {
    fake.models = ["llama3.2:3b", "qwen3:latest", "phi4"];
    fake.loaded = ["llama3.2:3b"];
    const { state, prober, one } = setup([record("a", `${fake.url}/`)]);
    await prober.probeNow();
    assert.deepEqual(one("a").models, ["llama3.2:3b", "qwen3:latest", "phi4"]);
    assert.deepEqual(one("a").loadedModels, ["llama3.2:3b"]);
    assert.equal(one("a").version, "0.33.0");
    assert.equal(state.isRoutable("a", "llama3.2:3b"), true);
    assert.equal(state.isRoutable("a", "qwen3"), true);
    assert.equal(state.isRoutable("a", "phi4:latest"), true);
    assert.equal(state.isRoutable("a", "llama3.2"), false);
    assert.equal(state.isRoutable("a", "m1"), false);

    fake.loaded = undefined;
    fake.psMissing = true;
    fake.models = ["m1"];
    await prober.probeNow();
    assert.equal(one("a").health, "up", "a server without /api/ps is still up");
    assert.equal(one("a").loadedModels, undefined);
    assert.equal(state.isRoutable("a", "m1"), true);
    assert.ok((fake.hits.get("/api/ps") ?? 0) >= 2);
  } finally {
    await fake.close();
  }
});

Deno.test("health: a server failing its probe endpoints is down with a short reason", async () => {
  const fake = FakeOllama.start("a");
  try {
    fake.probeFault = "error";
    const { prober, one } = setup([record("a", fake.url)]);
    await prober.probeNow();
    assert.equal(one("a").health, "down");
    assert.equal(one("a").lastProbeError, "/api/version answered 500");
  } finally {
    await fake.close();
  }
});

Deno.test("health: a hanging server times out and never stacks up probes", async () => {
  const fake = FakeOllama.start("a");
  try {
    fake.probeFault = "hang";
    const { prober, one } = setup([record("a", fake.url)], { timeoutMs: 200 });
    await Promise.all([prober.probeNow(), prober.probeNow()]);
    assert.equal(fake.hits.get("/api/version"), 1);
    assert.equal(one("a").health, "down");
    assert.equal(one("a").lastProbeError, "no answer within 200 ms");
    fake.probeFault = undefined;
    // The abandoned probe lets go of its connection asynchronously; until then rounds skip the server.
    for (let i = 0; i < 500 && one("a").health !== "up"; i++) {
      await new Promise((r) => setTimeout(r, 10));
      await prober.probeNow();
    }
    assert.equal(one("a").health, "up");
  } finally {
    await fake.close();
  }
});

Deno.test("health: a fetch that ignores its abort still times out, and the next round does not pile on", async () => {
  const calls: string[] = [];
  let release = () => {};
  const stuck = new Promise<Response>((resolve) => release = () => resolve(Response.json({})));
  const fetchStub = ((url: string) => {
    calls.push(url);
    return calls.length === 1 ? stuck : Promise.reject(new TypeError("connection refused"));
  }) as typeof fetch;
  const { prober, one } = setup([record("a", "http://backend.invalid:11434")], {
    timeoutMs: 50,
    fetch: fetchStub,
  });
  await prober.probeNow();
  assert.equal(one("a").lastProbeError, "no answer within 50 ms");
  await prober.probeNow();
  assert.equal(calls.length, 1);
  release();
  await eventually("the stuck probe to carry on and end", () => calls.length === 2);
});

Deno.test("health: servers are probed concurrently", async () => {
  const calls: string[] = [];
  const pending: (() => void)[] = [];
  const fetchStub = ((url: string) => {
    calls.push(new URL(url).host);
    return new Promise<Response>((resolve) => pending.push(() => resolve(Response.json({ models: [] }))));
  }) as typeof fetch;
  const servers = [record("a", "http://a.invalid"), record("b", "http://b.invalid")];
  const { prober } = setup(servers, { fetch: fetchStub });
  const round = prober.probeNow();
  await new Promise((r) => setTimeout(r, 0));
  assert.deepEqual(calls, ["a.invalid", "b.invalid"], "b is asked before a has answered");
  while (calls.length < 6 || pending.length > 0) {
    const next = pending.shift();
    if (next) next();
    else await new Promise((r) => setTimeout(r, 1));
  }
  await round;
});

Deno.test("health: OpenAI-compatible servers are asked /v1/models with their bearer key", async () => {
  const seen: (string | null)[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    const path = new URL(req.url).pathname;
    seen.push(req.headers.get("authorization"));
    if (path === "/missing/v1/models") return new Response("not here", { status: 404 });
    if (path !== "/v1/models") return new Response("no", { status: 500 });
    if (req.headers.get("authorization") !== "Bearer sk-test") return Response.json({}, { status: 401 });
    return Response.json({
      object: "list",
      data: [{ id: "gpt-oss-20b", object: "model" }, { id: "qwen3:8b" }],
    });
  });
  try {
    const base = `http://127.0.0.1:${server.addr.port}`;
    const { state, prober, one } = setup([
      record("keyed", `${base}/v1/`, { kind: "openai", apiKey: "sk-test" }),
      record("keyless", base, { kind: "openai" }),
      record("unlisted", `${base}/missing`, { kind: "openai" }),
    ]);
    await prober.probeNow();
    assert.equal(one("keyed").health, "up");
    assert.deepEqual(one("keyed").models, ["gpt-oss-20b", "qwen3:8b"]);
    assert.equal(state.isRoutable("keyed", "gpt-oss-20b"), true);
    assert.equal(state.isRoutable("keyed", "llama3"), false);
    assert.ok(seen.includes("Bearer sk-test"));
    assert.ok(seen.includes(null), "no key, no Authorization header");
    assert.equal(one("keyless").health, "down");
    assert.equal(one("keyless").lastProbeError, "/v1/models answered 401");
    assert.equal(one("unlisted").health, "up");
    assert.equal(one("unlisted").models, undefined);
    assert.equal(state.isRoutable("unlisted", "anything"), true);
  } finally {
    await server.shutdown();
  }
});

Deno.test("health: disabled and removed servers are not probed and are forgotten", async () => {
  const a = FakeOllama.start("a");
  const b = FakeOllama.start("b");
  try {
    const servers = [record("a", a.url), record("b", b.url)];
    const { state, prober } = setup(servers);
    await prober.probeNow();
    assert.deepEqual(state.names().sort(), ["a", "b"]);
    servers[1] = { ...servers[1], enabled: false };
    await prober.probeNow();
    assert.deepEqual(state.names(), ["a"]);
    assert.equal(b.hits.get("/api/version"), 1);
    assert.equal(a.hits.get("/api/version"), 2);
    servers.splice(0, 1);
    await prober.probeNow();
    assert.deepEqual(state.names(), []);
  } finally {
    await a.close();
    await b.close();
  }
});

Deno.test("health: start probes at once and then every interval; stop ends it", async () => {
  const fake = FakeOllama.start("a");
  try {
    const state = new ServerState({ now: Date.now });
    const prober = new HealthProber({ fetch, servers: () => [record("a", fake.url)], state, intervalMs: 50 });
    prober.start();
    await eventually("three rounds", () => (fake.hits.get("/api/version") ?? 0) >= 3);
    await prober.stop();
    // Lets a request aborted on its way in land before counting.
    await new Promise((r) => setTimeout(r, 50));
    const after = fake.hits.get("/api/version");
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(fake.hits.get("/api/version"), after);
    assert.equal(state.status()[0].health, "up");
  } finally {
    await fake.close();
  }
});

Deno.test("health: stop abandons a running probe without recording it", async () => {
  const fake = FakeOllama.start("a");
  try {
    fake.probeFault = "hang";
    const { state, prober } = setup([record("a", fake.url)], { timeoutMs: 60_000 });
    prober.start();
    await eventually("the probe to start", () => fake.hits.get("/api/version") === 1);
    await prober.stop();
    assert.deepEqual(state.status(), []);
  } finally {
    await fake.close();
  }
});

/** A loopback server answering every request with `answer`, counting what it was asked. */
function serveAll(answer: (url: URL) => Response) {
  const asked: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request) => {
    const url = new URL(request.url);
    asked.push(url.pathname);
    return answer(url);
  });
  return { url: `http://127.0.0.1:${server.addr.port}`, asked, close: () => server.shutdown() };
}

Deno.test("health: a redirect is refused, never followed, so a server cannot make the gateway fetch elsewhere", async () => {
  const internal = serveAll(() => Response.json({ version: "0.1.0", models: [] }));
  const redirecting = serveAll(() => Response.redirect(`${internal.url}/secret`, 302));
  try {
    const { prober, one } = setup([record("a", redirecting.url)]);
    await prober.probeNow();
    assert.equal(one("a").health, "down");
    assert.match(one("a").lastProbeError ?? "", /answered 302/);
    assert.ok(redirecting.asked.length > 0, "the server was probed");
    assert.deepEqual(internal.asked, [], "the redirect's target was never fetched");
  } finally {
    await internal.close();
    await redirecting.close();
  }
});

Deno.test("health: a probe reads a bounded answer, and a server answering more is down", async () => {
  // An endless body: a probe that read it whole would never end, or take the gateway's memory first.
  const chunk = new Uint8Array(64 * 1024).fill(32);
  let sent = 0;
  const endless = serveAll(() =>
    new Response(
      new ReadableStream({
        pull(controller) {
          sent += chunk.byteLength;
          controller.enqueue(chunk);
        },
      }),
      { headers: { "Content-Type": "application/json" } },
    )
  );
  try {
    const { prober, one } = setup([record("a", endless.url)], { timeoutMs: 30_000 });
    await prober.probeNow();
    assert.equal(one("a").health, "down");
    assert.match(one("a").lastProbeError ?? "", /answered more than 2097152 bytes/);
    assert.ok(sent < 64 * 1024 * 1024, `the server had sent ${sent} bytes when the probe gave up`);
  } finally {
    await endless.close();
  }
});
