/**
 * The gateway served by the runtime, run as the README's "Run it" section shows it: `deno serve` and
 * `deno serve --parallel` (two workers), each a real process on a store file, on the address its flags give.
 * Each answers both formats, whole and streamed; keeps an rpm limit exact, across its workers too; and on
 * SIGTERM stops listening, lets the streams it holds finish, writes every record and exits 0. Besides: the
 * module imported starts no listener, and every way the gateway listens itself (`deno task start`, each
 * `start:parallel` worker) reports the connection figures the README lists.
 */
import assert from "node:assert/strict";
import { FakeOllama } from "./fakes/fake_ollama.ts";
import { admin, type GatewayProcess, startGateway } from "./support/processes.ts";
import { GatedOllama, PROMPT_TOKENS } from "./support/gated_ollama.ts";
import {
  assertComplete,
  type Format,
  killChild,
  openChat,
  waitFor,
  waitUntilRefused,
} from "./support/chat_streams.ts";
import { assertLedgerConsistent, readLedger, recordsOf } from "./support/ledger_check.ts";
import { freePort, listensOn } from "./support/listening_ports.ts";

const root = new URL("..", import.meta.url).pathname;
const PATHS: Record<Format, string> = { A: "/v1/chat/completions", B: "/v1/chat.php" };
const HELLO = [{ role: "user", content: "hi" }];

/** The README's `deno serve` commands, as an operator pastes them. */
async function readmeServeCommands(): Promise<string[]> {
  const readme = await Deno.readTextFile(`${root}README.md`);
  return readme.split("\n").filter((line) => /\bdeno@[\d.]+ serve /.test(line));
}

/**
 * A README command as this test runs it: its environment and its arguments after `deno` (`npx --yes
 * deno@2.9.6` is this runtime), on loopback and `port`, with `jobs` workers where it sets `DENO_JOBS`.
 */
function asRun(command: string, port: number, jobs: number) {
  const words = command.trim().split(/\s+/);
  const env: Record<string, string> = {};
  while (/^[A-Z_]+=/.test(words[0])) {
    const [name, value] = words.shift()!.split("=");
    env[name] = name === "DENO_JOBS" ? String(jobs) : value;
  }
  const args = words.slice(words.findIndex((word) => word.startsWith("deno@")) + 1).map((word, i, all) =>
    all[i - 1] === "--port" ? String(port) : all[i - 1] === "--host" ? "127.0.0.1" : word
  );
  return { env, args };
}

/**
 * An rpm limit counts by the minute of the clock, so a burst that spanned two minutes would rightly be
 * admitted twice: it starts where the minute has ample time left.
 */
async function clearOfMinuteEnd(marginMs = 20_000): Promise<void> {
  const left = 60_000 - Date.now() % 60_000;
  if (left < marginMs) await new Promise((resolve) => setTimeout(resolve, left + 100));
}

async function chat(url: string, key: string, format: Format, stream: boolean) {
  const res = await fetch(`${url}${PATHS[format]}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${key}` },
    body: JSON.stringify({ messages: HELLO, stream }),
  });
  return { status: res.status, text: await res.text() };
}

/** Both formats, whole and streamed, carry the backend's answer. */
async function assertAnswers(url: string, key: string, content: string): Promise<void> {
  for (const format of ["A", "B"] as const) {
    const whole = await chat(url, key, format, false);
    assert.equal(whole.status, 200, whole.text);
    const answer = JSON.parse(whole.text);
    assert.equal(format === "A" ? answer.choices[0].message.content : answer.message.content, content);
    const streamed = await chat(url, key, format, true);
    assert.equal(streamed.status, 200, streamed.text);
    assertComplete(format, streamed.text, content);
  }
}

async function burst(url: string, key: string, n: number): Promise<Record<number, number>> {
  const statuses = await Promise.all(Array.from({ length: n }, async () => {
    const res = await fetch(`${url}${PATHS.A}`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${key}` },
      body: JSON.stringify({ messages: HELLO }),
    });
    await res.body?.cancel();
    return res.status;
  }));
  const counts: Record<number, number> = {};
  for (const status of statuses) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
}

const formatOf = (i: number): Format => i % 2 ? "B" : "A";

Deno.test("the README shows one deno serve command, and one with --parallel", async () => {
  const commands = await readmeServeCommands();
  assert.equal(commands.length, 2, commands.join("\n"));
  assert.deepEqual(commands.map((c) => / --parallel /.test(c)), [false, true]);
});

for (const parallel of [false, true]) {
  const name = parallel ? "deno serve --parallel (2 workers)" : "deno serve";
  Deno.test(`${name}: both formats on --host/--port, rpm exact, SIGTERM drains and writes every record`, async () => {
    const dir = await Deno.makeTempDir();
    const store = `${dir}/store.kv`;
    const env = { GATEWAY_KV: store };
    const fast = FakeOllama.start("fast");
    fast.models = ["m2"];
    const gated = new GatedOllama({ words: 8, before: 2, delayMs: 20 });
    let gateway: GatewayProcess | undefined;
    try {
      await admin(env, "server", "add", "--name", "fast", "--url", fast.url, "--model", "m2");
      // Declared slots: every held stream runs at once.
      await admin(
        env,
        "server",
        "add",
        "--name",
        "gated",
        "--url",
        gated.url,
        "--model",
        "m1",
        "--slots",
        "32",
      );
      const plain = await admin(env, "key", "create", "--model", "m2");
      const limited = await admin(env, "key", "create", "--model", "m2", "--rpm", "50");
      const held = await admin(env, "key", "create", "--model", "m1");

      const command = (await readmeServeCommands()).find((c) => / --parallel /.test(c) === parallel)!;
      const [port, unused] = [freePort(), freePort()];
      const run = asRun(command, port, 2);
      // PORT names another port: under `deno serve` only the runtime's flags count.
      gateway = await startGateway({ ...env, ...run.env, PORT: String(unused) }, run.args);
      assert.equal(gateway.url, `http://127.0.0.1:${port}`);
      assert.equal(await listensOn(unused), false, "nothing listens on PORT");
      if (parallel) assert.match(gateway.output(), /with 2 threads/);

      await assertAnswers(gateway.url, plain.key, "Hello from fast");

      // 400 connections at once reach both workers (about a quarter and three quarters, seen); each counts in
      // the store.
      await clearOfMinuteEnd();
      assert.deepEqual(await burst(gateway.url, limited.key, 400), { 200: 50, 429: 350 });

      // The runtime may hand all six to one worker: the other then finishes first and must wait for it.

      const chats = Array.from({ length: 6 }, (_, i) => openChat(gateway!.url, held.key, formatOf(i)));
      await Promise.all(chats.map((c) => c.started));
      await waitFor("6 answers held at the backend", () => gated.waiting === 6);
      gateway.child.kill("SIGTERM");
      await waitUntilRefused(gateway.url);
      assert.equal(gated.waiting, 6, "the listener closed while every answer was still held");
      gated.open();
      const expected = gated.answer;
      (await Promise.all(chats.map((c) => c.body))).forEach((text, i) =>
        assertComplete(formatOf(i), text, expected)
      );
      assert.equal((await gateway.child.status).code, 0);

      const ledger = await readLedger(store);
      const heldRecords = recordsOf(ledger, held.id);
      assert.deepEqual(heldRecords.map((r) => [r.status, r.stream]), Array(6).fill(["ok", true]));
      for (const rec of heldRecords) {
        assert.equal(rec.promptTokens, PROMPT_TOKENS);
        assert.equal(rec.completionTokens, gated.words);
      }
      assert.deepEqual(recordsOf(ledger, plain.id).map((r) => r.status), Array(4).fill("ok"));
      const limitedRecords = Object.groupBy(recordsOf(ledger, limited.id), (r) => r.status);
      assert.equal(limitedRecords.ok?.length, 50);
      assert.equal(limitedRecords.rejected?.length, 350);
      assertLedgerConsistent(ledger);
    } finally {
      if (gateway) await killChild(gateway.child);
      await fast.close();
      await gated.close();
      await Deno.remove(dir, { recursive: true });
    }
  });
}

Deno.test("main.ts imported starts no listener; its default export serves through another server", async () => {
  const dir = await Deno.makeTempDir();
  const port = freePort();
  const script = `
    import gateway from "./main.ts";
    const listened = await Deno.connect({ hostname: "127.0.0.1", port: ${port} }).then((c) => (c.close(), true), () => false);
    const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, gateway.fetch);
    const res = await fetch("http://127.0.0.1:" + server.addr.port + "/v1/models");
    console.log(JSON.stringify({ listened, status: res.status, body: await res.json() }));
    Deno.exit(0);
  `;
  try {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["eval", "--ext=ts", script],
      cwd: root,
      env: { GATEWAY_KV: `${dir}/store.kv`, PORT: String(port), HOST: "127.0.0.1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 0, stderr);
    const seen = JSON.parse(new TextDecoder().decode(out.stdout));
    assert.equal(seen.listened, false, "nothing listens on PORT");
    assert.equal(seen.status, 401);
    assert.equal(seen.body.error.code, "invalid_api_key");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** The connection figures of the README's metrics table. */
const CONNECTION_FIGURES = [
  "gateway_connections_open",
  "gateway_connections_limit",
  "gateway_connection_waits_total",
  "gateway_accept_failures_total",
  "gateway_connections_closed_total",
];

for (const [task, extraEnv] of [["start", {}], ["start:parallel", { GATEWAY_WORKERS: "2" }]] as const) {
  Deno.test(`deno task ${task}: every scrape of /metrics has the connection figures`, async () => {
    const dir = await Deno.makeTempDir();
    const env = { GATEWAY_KV: `${dir}/store.kv`, GATEWAY_ADMIN_TOKEN: "deno-serve-admin-token", ...extraEnv };
    let gateway: GatewayProcess | undefined;
    try {
      const started = gateway = await startGateway(env, ["task", "--quiet", task]);
      // Each scrape on a connection of its own, so that the workers of start:parallel share them.
      for (let i = 0; i < 6; i++) {
        using client = Deno.createHttpClient({});
        const res = await fetch(`${started.url}/metrics`, {
          client,
          headers: { Authorization: "Bearer deno-serve-admin-token" },
        });
        const text = await res.text();
        assert.equal(res.status, 200, text);
        for (const name of CONNECTION_FIGURES) assert.match(text, new RegExp(`^# TYPE ${name} `, "m"), name);
      }
      assert.equal((await gateway.stop()).code, 0);
      assert.doesNotMatch(
        gateway.output(),
        /did you mean/,
        "the runtime took the gateway for a served module",
      );
    } finally {
      if (gateway) await killChild(gateway.child);
      await Deno.remove(dir, { recursive: true });
    }
  });
}
