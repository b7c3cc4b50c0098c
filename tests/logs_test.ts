/**
 * The gateway's log as an admin reads it, from a real `deno task start` process: the start line, a server
 * going down and coming back with the reason, the breaker's changes, an admin change taken in, the access
 * log, the refusal summary and the stop, each once and with its fields, and no secret anywhere.
 */
import assert from "node:assert/strict";
import { FakeOllama } from "./fakes/fake_ollama.ts";
import { admin, chat, startGateway } from "./support/processes.ts";
import { eventually } from "./support/wait_for.ts";

type Line = Record<string, unknown> & { time: string; level: string; event: string; msg: string };

/** The JSON lines the gateway wrote so far (the rest of its output is the task runner's). */
function lines(output: string): Line[] {
  return output.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
}

const of = (output: string, event: string) => lines(output).filter((l) => l.event === event);

/** When gpu1 was last probed, from the admin status. */
async function lastProbeAt(url: string, token: string): Promise<number | undefined> {
  const res = await fetch(`${url}/admin/status`, { headers: { Authorization: `Bearer ${token}` } });
  assert.equal(res.status, 200);
  const body = await res.json() as { health: { servers: { name: string; lastProbeAt?: number }[] } };
  return body.health.servers.find((s) => s.name === "gpu1")?.lastProbeAt;
}

Deno.test("log: start, server down and up with the reason, breaker, admin change, access log, summary and stop, once each", async () => {
  const dir = await Deno.makeTempDir();
  const fake = FakeOllama.start("logs");
  const env = {
    GATEWAY_KV: `${dir}/store.kv`,
    GATEWAY_LOG_FORMAT: "json",
    GATEWAY_ACCESS_LOG: "1",
    GATEWAY_PROBE_INTERVAL_MS: "100",
    GATEWAY_RELOAD_INTERVAL_MS: "50",
    GATEWAY_ADMIN_TOKEN: "admin-token-that-is-long-enough-0123456789",
  };
  const gateway = await startGateway(env);
  let secret = "";
  try {
    const start = await eventually("the start line", () => of(gateway.output(), "gateway.start")[0]);
    assert.equal(start.address, gateway.url);
    assert.equal(start.store, env.GATEWAY_KV);
    assert.equal(start.profile, "self-hosted");
    assert.equal(start.deno, Deno.version.deno);
    assert.ok(
      start.version === undefined || /^[0-9a-f]{12}$/.test(String(start.version)),
      String(start.version),
    );
    assert.ok(!Number.isNaN(Date.parse(start.time)), start.time);

    await admin(env, "server", "add", "--name", "gpu1", "--url", fake.url, "--model", "m1");
    const added = await eventually("the admin change", () => of(gateway.output(), "config.changed")[0]);
    assert.equal(added.servers, "+gpu1");
    const up = await eventually("gpu1 up", () => of(gateway.output(), "server.up")[0]);
    assert.equal(up.server, "gpu1");

    const created = await admin(env, "key", "create", "--model", "m1");
    secret = created.key;
    await eventually("the key to be served", async () => await chat(gateway.url, secret) === 200);
    const access = await eventually(
      "an access line for a 200",
      () => of(gateway.output(), "request").find((l) => l.status === 200),
    );
    assert.equal(access.key, created.id);
    assert.equal(access.model, "m1");
    assert.equal(access.server, "gpu1");
    assert.equal(access.format, "openai");
    assert.equal(access.outcome, "ok");
    assert.ok(
      Number(access.tokens) > 0 &&
        access.tokens === Number(access.promptTokens) + Number(access.completionTokens),
    );
    assert.equal(typeof access.latencyMs, "number");
    assert.ok(!Number.isNaN(Date.parse(String(access.at))));

    // The server goes away for several probe rounds, then comes back on the same address.
    await fake.pause();
    const down = await eventually("gpu1 down", () => of(gateway.output(), "server.down")[0]);
    assert.equal(down.server, "gpu1");
    assert.equal(down.reason, "connection refused");
    assert.equal(down.level, "warn");
    const opened = await eventually("the breaker open", () => of(gateway.output(), "breaker.open")[0]);
    assert.equal(opened.server, "gpu1");
    assert.equal(opened.reason, "the health probe failed");
    // Three more failed probes: each would add a line if the log repeated itself every round.
    const seen = new Set<number>();
    await eventually("three more failed probes", async () => {
      const at = await lastProbeAt(gateway.url, env.GATEWAY_ADMIN_TOKEN);
      if (at !== undefined && at > Date.parse(down.time)) seen.add(at);
      return seen.size >= 3;
    });
    fake.resume();
    await eventually("gpu1 up again", () => of(gateway.output(), "server.up").length === 2);
    const halfOpen = await eventually(
      "the breaker half-open",
      () => of(gateway.output(), "breaker.half-open")[0],
    );
    assert.equal(halfOpen.server, "gpu1");
    await eventually("a request to close the breaker", async () => await chat(gateway.url, secret) === 200);
    const closed = await eventually("the breaker closed", () => of(gateway.output(), "breaker.closed")[0]);
    assert.equal(closed.reason, "the trial request succeeded");

    assert.equal(await chat(gateway.url, "gwk_not-a-key"), 401);
    await eventually(
      "the refusal's access line",
      () => of(gateway.output(), "request").find((l) => l.status === 401),
    );
  } finally {
    const status = await gateway.stop();
    await fake.close();
    await Deno.remove(dir, { recursive: true });
    assert.equal(status.code, 0, gateway.output());
  }
  const output = gateway.output();
  assert.equal(of(output, "gateway.start").length, 1);
  assert.equal(of(output, "server.down").length, 1, "one line for the server going down, not one per probe");
  assert.equal(of(output, "server.up").length, 2);
  assert.equal(of(output, "breaker.open").length, 1);
  assert.equal(of(output, "config.changed").filter((l) => l.servers).length, 1);
  const stopping = of(output, "gateway.stopping");
  assert.equal(stopping.length, 1);
  assert.equal(stopping[0].reason, "SIGTERM");
  assert.equal(of(output, "gateway.stopped").length, 1);
  const summary = of(output, "requests.summary");
  assert.equal(summary.length, 1, "the stop writes what the minute's summary had counted");
  assert.equal(summary[0].refused, 1);
  assert.match(String(summary[0].refusedCodes), /invalid_api_key=1/);
  // No secret in any line: not the key, not the admin token, not the server's address.
  assert.ok(secret.length > 10);
  for (const text of [secret, secret.slice(-12), env.GATEWAY_ADMIN_TOKEN, fake.url]) {
    assert.ok(!output.includes(text), `the output holds ${text}`);
  }
  for (const line of lines(output)) {
    assert.ok(line.time && line.level && line.event && line.msg !== undefined);
  }
});
