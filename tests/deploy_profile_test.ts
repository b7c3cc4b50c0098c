/**
 * The Deploy profile: the gateway keeps to what Deno Deploy offers. It is chosen by `DENO_DEPLOY` (which Deploy
 * sets) or forced with `GATEWAY_PROFILE=deploy`; what it cannot honour (a store file, a metrics port) is refused
 * at start. As a real process, served by the runtime with Deploy's permissions less write access
 * (`--allow-net --allow-env --allow-read`: `Deno.openKv()` without a path needs none, the runtime keeps that
 * file itself), it answers chat in both formats, discovery, the admin page and `/metrics` on its one port,
 * opens no other, writes no file but its store's, and on SIGTERM writes every record to that store. The admin
 * CLI reaches the same store through its file under the runtime's origin storage.
 */
import assert from "node:assert/strict";
import { loadConfig } from "../lib/config.ts";
import { FakeOllama } from "./fakes/fake_ollama.ts";
import { admin } from "./support/processes.ts";
import { assertComplete, type Format, killChild } from "./support/chat_streams.ts";
import { assertLedgerConsistent, readLedger, recordsOf } from "./support/ledger_check.ts";
import { eventually, within } from "./support/wait_for.ts";
import { freePort, listeningPorts } from "./support/listening_ports.ts";

const root = new URL("..", import.meta.url).pathname;
const ADMIN_TOKEN = "deploy-admin-token";
const CHAT_PATHS: Record<Format, string> = { A: "/v1/chat/completions", B: "/v1/chat.php" };
/** What SQLite keeps beside a database file while it is open. */
const STORE_FILES = /^kv\.sqlite3(-wal|-shm|-journal)?$/;

Deno.test("profile: DENO_DEPLOY chooses deploy, GATEWAY_PROFILE forces either; what Deploy lacks is refused", () => {
  const cases: [Record<string, string>, "deploy" | "self-hosted", number][] = [
    [{}, "self-hosted", 10_000],
    [{ DENO_DEPLOY: "true" }, "deploy", 3_000],
    [{ DENO_DEPLOY: "1", GATEWAY_PROFILE: "self-hosted" }, "self-hosted", 10_000],
    [{ GATEWAY_PROFILE: "deploy" }, "deploy", 3_000],
    [{ GATEWAY_PROFILE: "deploy", GATEWAY_SHUTDOWN_GRACE_MS: "4000" }, "deploy", 4_000],
  ];
  for (const [env, profile, graceMs] of cases) {
    const config = loadConfig(env);
    assert.equal(config.profile, profile, JSON.stringify(env));
    assert.equal(config.shutdownGraceMs, graceMs, JSON.stringify(env));
  }
  const remote = "https://api.deno.com/v2/databases/x/connect";
  assert.equal(loadConfig({ DENO_DEPLOY: "true", GATEWAY_KV: remote }).kvPath, remote);
  assert.equal(loadConfig({ GATEWAY_KV: "./data/x.kv", GATEWAY_METRICS_PORT: "9100" }).metricsPort, 9100);

  const refused: [Record<string, string>, RegExp][] = [
    [
      { DENO_DEPLOY: "true", GATEWAY_KV: "./data/gateway.kv" },
      /GATEWAY_KV: .*not a file: \.\/data\/gateway\.kv/,
    ],
    [{ GATEWAY_PROFILE: "deploy", GATEWAY_KV: ":memory:" }, /GATEWAY_KV/],
    [{ GATEWAY_PROFILE: "deploy", GATEWAY_METRICS_PORT: "9100" }, /GATEWAY_METRICS_PORT: .*one port/],
    [{ GATEWAY_PROFILE: "cloud" }, /Invalid configuration: GATEWAY_PROFILE/],
  ];
  for (const [env, message] of refused) assert.throws(() => loadConfig(env), message, JSON.stringify(env));
});

/** Where the runtime keeps what `Deno.openKv()` opens without a path, one folder per origin (`deno info`). */
async function originStorage(): Promise<{ denoDir: string; originStorage: string }> {
  const out = await new Deno.Command(Deno.execPath(), { args: ["info", "--json"], stdout: "piped" }).output();
  return JSON.parse(new TextDecoder().decode(out.stdout));
}

async function entries(dir: string): Promise<string[]> {
  try {
    return (await Array.fromAsync(Deno.readDir(dir))).map((e) => e.name).sort();
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    throw error;
  }
}

/** Every file and folder under `dir`, as paths relative to it. */
async function tree(dir: string, prefix = ""): Promise<string[]> {
  const out: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    out.push(`${prefix}${entry.name}`);
    if (entry.isDirectory) out.push(...await tree(`${dir}/${entry.name}`, `${prefix}${entry.name}/`));
  }
  return out.sort();
}

interface Served {
  child: Deno.ChildProcess;
  url: string;
  output(): string;
}

/** Spawns the gateway and resolves once the runtime says it listens; its output is kept and passed on. */
async function serve(args: string[], env: Record<string, string>, cwd: string): Promise<Served> {
  const child = new Deno.Command(Deno.execPath(), {
    args,
    cwd,
    env,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let seen = "";
  const { promise: announced, resolve, reject } = Promise.withResolvers<string>();
  const watch = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) {
      const text = decoder.decode(chunk, { stream: true });
      await Deno.stderr.write(new TextEncoder().encode(text));
      seen += text;
      const match = /Listening on (http:\/\/[^\s/]+)/.exec(seen);
      if (match) resolve(match[1]);
    }
    reject(new Error(`the gateway exited before listening: ${seen}`));
  };
  watch(child.stdout).catch(reject);
  watch(child.stderr).catch(reject);
  try {
    return { child, url: await within("the runtime to listen", announced, 60_000), output: () => seen };
  } catch (error) {
    await killChild(child);
    throw error;
  }
}

async function chat(url: string, key: string, format: Format, stream: boolean) {
  const res = await fetch(`${url}${CHAT_PATHS[format]}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${key}` },
    body: JSON.stringify({ messages: [{ role: "user", content: "hi" }], stream }),
  });
  return { status: res.status, text: await res.text() };
}

async function get(url: string, token?: string) {
  const res = await fetch(url, { headers: token ? { Authorization: `Bearer ${token}` } : {} });
  return { status: res.status, type: res.headers.get("content-type") ?? "", text: await res.text() };
}

/**
 * How the runtime serves the module. `deno serve` is how the profile runs locally; `deno run` with the
 * runtime's auto-serve (`DENO_AUTO_SERVE`, on the address `DENO_SERVE_ADDRESS` gives) is the runtime serving a
 * default export without `deno serve` on its command line, with the profile chosen by `DENO_DEPLOY` alone.
 */
const WAYS: {
  name: string;
  run(port: number, location: string): { args: string[]; env: Record<string, string> };
}[] = [
  {
    name: "deno serve, GATEWAY_PROFILE=deploy",
    run: (port, location) => ({
      args: ["serve", `--location=${location}`, "--host", "127.0.0.1", "--port", String(port)],
      env: { GATEWAY_PROFILE: "deploy" },
    }),
  },
  {
    name: "deno run with the runtime's auto-serve, DENO_DEPLOY=true",
    run: (port, location) => ({
      args: ["run", `--location=${location}`],
      env: { DENO_DEPLOY: "true", DENO_AUTO_SERVE: "1", DENO_SERVE_ADDRESS: `tcp:127.0.0.1:${port}` },
    }),
  },
];

for (const way of WAYS) {
  Deno.test(`deploy profile, ${way.name}: chat, discovery, admin page and /metrics on one port, no file written`, async () => {
    const scratch = await Deno.makeTempDir({ prefix: "deploy_profile_" });
    const [cwd, home, tmp] = ["cwd", "home", "tmp"].map((name) => `${scratch}/${name}`);
    for (const dir of [cwd, home, tmp]) await Deno.mkdir(dir);
    const { denoDir, originStorage: origins } = await originStorage();
    const originsBefore = await entries(origins);
    // An origin of its own: a store no earlier run left behind.
    const location = `https://deploy-profile-${crypto.randomUUID()}.invalid`;
    const port = freePort();
    const backend = FakeOllama.start("fast");
    backend.models = ["m2"];
    let gateway: Served | undefined;
    let storeDir: string | undefined;
    try {
      const run = way.run(port, location);
      gateway = await serve(
        [
          ...run.args,
          `--config=${root}deno.json`,
          "--no-prompt",
          "--allow-net",
          "--allow-env",
          "--allow-read",
          `${root}main.ts`,
        ],
        {
          ...run.env,
          GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN,
          // Nothing may listen here: the gateway does not listen itself under the profile.
          PORT: String(freePort()),
          DENO_DIR: denoDir,
          HOME: home,
          TMPDIR: tmp,
          PATH: Deno.env.get("PATH") ?? "",
          NO_COLOR: "1",
          DENO_NO_UPDATE_CHECK: "1",
        },
        cwd,
      );
      const url = gateway.url;
      assert.equal(url, `http://127.0.0.1:${port}`);

      // The store opened before the runtime listened: the one new origin folder, holding the KV file only.
      const created = (await entries(origins)).filter((name) => !originsBefore.includes(name));
      assert.equal(created.length, 1, `new origin folders: ${created}`);
      storeDir = `${origins}/${created[0]}`;
      const store = `${storeDir}/kv.sqlite3`;
      assert.ok((await entries(storeDir)).includes("kv.sqlite3"));

      const env = { GATEWAY_KV: store };
      await admin(env, "server", "add", "--name", "fast", "--url", backend.url, "--model", "m2");
      const key = await admin(env, "key", "create", "--model", "m2");
      await eventually("the gateway to see the server added by the CLI", async () => {
        const status = await get(`${url}/admin/status`, ADMIN_TOKEN);
        return status.status === 200 && status.text.includes('"fast"');
      });

      for (const format of ["A", "B"] as const) {
        const whole = await chat(url, key.key, format, false);
        assert.equal(whole.status, 200, whole.text);
        const answer = JSON.parse(whole.text);
        assert.equal(
          format === "A" ? answer.choices[0].message.content : answer.message.content,
          "Hello from fast",
        );
        const streamed = await chat(url, key.key, format, true);
        assert.equal(streamed.status, 200, streamed.text);
        assertComplete(format, streamed.text, "Hello from fast");
      }

      const models = await get(`${url}/v1/models`, key.key);
      assert.equal(models.status, 200, models.text);
      assert.deepEqual(JSON.parse(models.text).data.map((m: { id: string }) => m.id), ["m2"]);
      const tags = await get(`${url}/api/tags`, key.key);
      assert.equal(tags.status, 200, tags.text);
      assert.equal(JSON.parse(tags.text).models.length, 1, tags.text);

      const page = await get(`${url}/admin`, ADMIN_TOKEN);
      assert.equal(page.status, 200);
      assert.match(page.type, /^text\/html/);
      assert.match(page.text, /fast/);
      assert.equal((await get(`${url}/admin`)).status, 401);

      const metrics = await get(`${url}/metrics`, ADMIN_TOKEN);
      assert.equal(metrics.status, 200, metrics.text);
      const answered = metrics.text.split("\n")
        .filter((line) => line.startsWith("gateway_requests_total{") && line.includes('status="200"'))
        .reduce((sum, line) => sum + Number(line.split(" ").at(-1)), 0);
      assert.equal(answered, 4, metrics.text);
      assert.equal((await get(`${url}/metrics`)).status, 401);
      assert.equal((await get(`${url}/metrics`, "not-the-token")).status, 401);

      assert.deepEqual(await listeningPorts(gateway.child.pid), [port]);

      gateway.child.kill("SIGTERM");
      assert.equal((await within("the gateway to stop", gateway.child.status)).code, 0, gateway.output());
      assert.doesNotMatch(gateway.output(), /NotCapable|write access|gateway listening on|metrics on/);

      // Every record reached the platform's store; nothing else was written anywhere the process could.
      const ledger = await readLedger(store);
      assert.deepEqual(recordsOf(ledger, key.id).map((r) => r.status), Array(4).fill("ok"));
      assertLedgerConsistent(ledger);
      for (const dir of [cwd, home, tmp]) assert.deepEqual(await tree(dir), [], dir);
      assert.deepEqual((await entries(origins)).filter((name) => !originsBefore.includes(name)), created);
      for (const name of await entries(storeDir)) assert.match(name, STORE_FILES);
    } finally {
      if (gateway) await killChild(gateway.child);
      await backend.close();
      // The store is this test's (its origin is), found or not: a failed start may have made it.
      for (const name of await entries(origins)) {
        if (!originsBefore.includes(name)) await Deno.remove(`${origins}/${name}`, { recursive: true });
      }
      await Deno.remove(scratch, { recursive: true });
    }
  });
}
