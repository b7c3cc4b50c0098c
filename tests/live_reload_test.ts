/**
 * The real thing: `deno task start` and `deno task admin` as separate processes on one store file. A change made
 * with the CLI must reach the running gateway within one second, and SIGTERM must stop it cleanly.
 */
import assert from "node:assert/strict";
import { FakeOllama } from "./fakes/fake_ollama.ts";

const root = new URL("..", import.meta.url).pathname;

async function admin(env: Record<string, string>, ...args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["task", "--quiet", "admin", ...args, "--json"],
    cwd: root,
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  return JSON.parse(new TextDecoder().decode(out.stdout));
}

/** Starts the gateway process and resolves with its base URL once it listens. */
async function startGateway(env: Record<string, string>) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["task", "--quiet", "start"],
    cwd: root,
    env: { ...env, PORT: "0", HOST: "127.0.0.1" },
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  while (!/listening on (http:\S+)/.test(seen)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`gateway exited before listening: ${seen}`);
    seen += value;
  }
  // Keep draining stdout so the child never blocks on a full pipe.
  (async () => {
    while (!(await reader.read()).done);
  })();
  return { child, url: /listening on (http:\S+)/.exec(seen)![1] };
}

async function chat(url: string, secret: string) {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${secret}` },
    body: JSON.stringify({ model: "x", messages: [{ role: "user", content: "hi" }] }),
  });
  await res.body?.cancel();
  return res.status;
}

/** Polls until `status` is seen; returns how long it took. */
async function timeUntil(url: string, secret: string, status: number, limitMs = 3000) {
  const start = performance.now();
  while (performance.now() - start < limitMs) {
    if (await chat(url, secret) === status) return performance.now() - start;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`never answered ${status}`);
}

Deno.test("CLI changes reach a running gateway within one second; SIGTERM exits 0", async () => {
  const dir = await Deno.makeTempDir();
  const fake = FakeOllama.start("live");
  const env = { GATEWAY_KV: `${dir}/store.kv` };
  const { child, url } = await startGateway(env);
  try {
    await admin(env, "server", "add", "--name", "gpu1", "--url", fake.url, "--model", "m1");
    const { key } = await admin(env, "key", "create", "--model", "m1");
    const created = await timeUntil(url, key, 200);
    assert.ok(created < 1000, `new key took ${created} ms`);

    const [{ id }] = await admin(env, "key", "list");
    await admin(env, "key", "revoke", id);
    const revoked = await timeUntil(url, key, 401);
    assert.ok(revoked < 1000, `revocation took ${revoked} ms`);

    const { key: other } = await admin(env, "key", "create", "--model", "m1");
    assert.equal(await chat(url, other), 200);
    await admin(env, "server", "disable", "gpu1");
    const disabled = await timeUntil(url, other, 503);
    assert.ok(disabled < 1000, `disabling took ${disabled} ms`);
  } finally {
    child.kill("SIGTERM");
    const status = await child.status;
    await fake.close();
    await Deno.remove(dir, { recursive: true });
    assert.equal(status.code, 0);
  }
});
