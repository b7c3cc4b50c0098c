/**
 * A signal that reaches a worker during its warm-up: the worker never goes on to serve. Under
 * `deno task start:parallel` the second worker starts its warm-up only once the first listens, so a stream held
 * on the first and a SIGTERM right then find the second one starting. The port must close, and stay closed past
 * the longest warm-up, while the stream is still held (a worker that went on to listen after its stop kept a port
 * open no one drained); the stream must then finish, and the process exit 0 with the stream's record written.
 */
import assert from "node:assert/strict";
import { admin } from "./support/processes.ts";
import { GatedOllama } from "./support/gated_ollama.ts";
import { assertComplete, killChild, openChat, waitUntilRefused } from "./support/chat_streams.ts";
import { freePort, listensOn } from "./support/listening_ports.ts";
import { readLedger, recordsOf } from "./support/ledger_check.ts";

const root = new URL("..", import.meta.url).pathname;

Deno.test("start:parallel: a worker signalled during its warm-up never listens; the held stream finishes", async () => {
  const dir = await Deno.makeTempDir();
  const env = { GATEWAY_KV: `${dir}/store.kv` };
  const gated = new GatedOllama({ words: 6, before: 2, delayMs: 10 });
  let child: Deno.ChildProcess | undefined;
  try {
    await admin(env, "server", "add", "--name", "gated", "--url", gated.url, "--model", "m1");
    const { key, id } = await admin(env, "key", "create", "--model", "m1");
    const port = freePort();
    child = new Deno.Command(Deno.execPath(), {
      args: ["task", "--quiet", "start:parallel"],
      cwd: root,
      env: { ...env, PORT: String(port), HOST: "127.0.0.1", GATEWAY_WORKERS: "2" },
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    let output = "";
    const drained = (async () => {
      const decoder = new TextDecoder();
      for await (const chunk of child.stdout) output += decoder.decode(chunk, { stream: true });
    })();
    const url = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 60_000;
    while (!await listensOn(port)) {
      assert.ok(Date.now() < deadline, "the first worker did not listen within 60 s");
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const chat = openChat(url, key, "A");
    await chat.started;
    child.kill("SIGTERM");
    // The start line comes once every worker listens: not yet, so the second was still warming up.
    assert.doesNotMatch(output, /listening on/, "the second worker's warm-up had ended before the signal");
    await waitUntilRefused(url);
    // Held past the longest warm-up (5 s, lib/warm_up/mod.ts), within the grace period (10 s): a worker that
    // went on after its warm-up would be listening again by then.
    const heldUntil = Date.now() + 6_000;
    while (Date.now() < heldUntil) {
      assert.equal(await listensOn(port), false, "a worker listened after the signal");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.equal(gated.waiting, 1, "the port closed while the stream was still held");
    gated.open();
    assertComplete("A", await chat.body, gated.answer);
    assert.equal((await child.status).code, 0);
    await drained;
    assert.doesNotMatch(output, /listening on/, "the signalled worker went on to listen");
    const records = recordsOf(await readLedger(env.GATEWAY_KV), id);
    assert.deepEqual(records.map((r) => [r.status, r.completionTokens]), [["ok", gated.words]]);
  } finally {
    if (child) await killChild(child);
    await gated.close();
    await Deno.remove(dir, { recursive: true });
  }
});
