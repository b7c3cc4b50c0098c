/**
 * Stopping a real gateway process with SIGTERM while it streams: it stops listening at once, lets the
 * running answers finish within its grace period, ends those that run longer (recorded partial, like a
 * broken stream), writes every record and counter, and exits 0. The store is read back after the process is
 * gone.
 */
import assert from "node:assert/strict";
import { admin, type GatewayProcess, startGateway } from "./support/processes.ts";
import { GatedOllama, PROMPT_TOKENS } from "./support/gated_ollama.ts";
import {
  assertComplete,
  assertEndedWithError,
  type Format,
  killChild,
  openChat,
  waitFor,
  waitUntilRefused,
} from "./support/chat_streams.ts";
import { assertLedgerConsistent, readLedger, recordsOf } from "./support/ledger_check.ts";

const PERMISSIONS = ["--allow-net", "--allow-env", "--allow-read", "--allow-write"];
/** The gateway itself rather than `deno task start`: killing it after a failure must leave nothing behind. */
const GATEWAY = ["run", ...PERMISSIONS, "main.ts"];

interface Setup {
  env: Record<string, string>;
  store: string;
  key: string;
  keyId: string;
  start: (args?: string[], extraEnv?: Record<string, string>) => Promise<GatewayProcess>;
}

/** A store with the backend and one key of user "team"; every gateway started is killed at the end. */
async function withGateway(backend: GatedOllama, fn: (setup: Setup) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir();
  const store = `${dir}/store.kv`;
  const env = { GATEWAY_KV: store };
  const running: GatewayProcess[] = [];
  try {
    // Declared slots: the answers these tests hold at the backend (some never start) all run at once, as the
    // tests are about stopping, not about what a server without --slots is found to run.
    const server = ["--name", "gpu1", "--url", backend.url, "--model", "m1", "--slots", "32"];
    await admin(env, "server", "add", ...server);
    await admin(env, "user", "add", "--name", "team");
    const { key, id } = await admin(env, "key", "create", "--model", "m1", "--user", "team");
    await fn({
      env,
      store,
      key,
      keyId: id,
      start: async (args = GATEWAY, extraEnv = {}) => {
        const gateway = await startGateway({ ...env, ...extraEnv }, args);
        running.push(gateway);
        return gateway;
      },
    });
  } finally {
    await Promise.all(running.map((g) => killChild(g.child)));
    await backend.close();
    await Deno.remove(dir, { recursive: true });
  }
}

const formatOf = (i: number): Format => i % 2 ? "B" : "A";

Deno.test("SIGTERM: 20 streams mid-answer all finish, no new connection is taken, every record is written", async () => {
  const backend = new GatedOllama({ words: 12, before: 2, delayMs: 20 });
  await withGateway(backend, async ({ store, key, keyId, start }) => {
    const gateway = await start(undefined, { GATEWAY_SHUTDOWN_GRACE_MS: "120000" });
    const chats = Array.from({ length: 20 }, (_, i) => openChat(gateway.url, key, formatOf(i)));
    await Promise.all(chats.map((c) => c.started));
    await waitFor("20 answers held at the backend", () => backend.waiting === 20);

    gateway.child.kill("SIGTERM");
    await waitUntilRefused(gateway.url);
    assert.equal(backend.waiting, 20, "the listener closed while every answer was still held");
    backend.open();

    const expected = backend.answer;
    const bodies = await Promise.all(chats.map((c) => c.body));
    bodies.forEach((text, i) => assertComplete(formatOf(i), text, expected));
    assert.equal((await gateway.child.status).code, 0);

    const ledger = await readLedger(store);
    const records = recordsOf(ledger, keyId);
    assert.equal(records.length, 20);
    for (const rec of records) {
      assert.equal(rec.status, "ok");
      assert.equal(rec.stream, true);
      assert.equal(rec.promptTokens, PROMPT_TOKENS);
      assert.equal(rec.completionTokens, backend.words);
      assert.equal(rec.tokenSource, "backend");
    }
    assert.deepEqual(
      records.map((r) => r.format).sort(),
      [...Array(10).fill("ollama"), ...Array(10).fill("openai")],
    );
    assertLedgerConsistent(ledger);
    const perRequest = PROMPT_TOKENS + backend.words;
    const keyCounters = [...ledger.counters].filter(([id]) => id.startsWith(`key/${keyId}/`));
    assert.deepEqual(keyCounters.map(([, tokens]) => tokens), [
      20 * perRequest,
      20 * perRequest,
      20 * perRequest,
    ]);
  });
});

Deno.test("SIGTERM: what runs past the grace period is ended at the bound, recorded, and the exit is still 0", async () => {
  const backend = new GatedOllama({ before: 2, delayMs: 50, endless: true, wholeHangs: true });
  backend.open();
  const graceMs = 1_500;
  await withGateway(backend, async ({ store, key, keyId, start }) => {
    const gateway = await start(undefined, { GATEWAY_SHUTDOWN_GRACE_MS: String(graceMs) });
    const streams = [openChat(gateway.url, key, "A"), openChat(gateway.url, key, "B")];
    const whole = openChat(gateway.url, key, "A", false);
    await Promise.all(streams.map((c) => c.started));
    await waitFor("the non-streamed answer held at the backend", () => backend.waiting === 1);

    const signalled = performance.now();
    gateway.child.kill("SIGTERM");
    const status = await gateway.child.status;
    const tookMs = performance.now() - signalled;
    assert.equal(status.code, 0);
    assert.ok(tookMs >= graceMs, `exited after ${tookMs} ms, before the grace period ended`);
    // Generous: the bound is grace + 2 s for the last bytes, plus the final commit, on a busy machine.
    assert.ok(tookMs < graceMs + 10_000, `exited ${tookMs} ms after SIGTERM`);

    const [a, b] = await Promise.all(streams.map((c) => c.body));
    assertEndedWithError("A", a, /shutting down/);
    assertEndedWithError("B", b, /shutting down/);
    const answer = JSON.parse(await whole.body);
    assert.equal(answer.status, 503);
    assert.equal(answer.body.error.code, "shutting_down");

    const ledger = await readLedger(store);
    const records = recordsOf(ledger, keyId);
    const partial = records.filter((r) => r.status === "partial");
    assert.equal(partial.length, 2);
    for (const rec of partial) {
      assert.equal(rec.errorCode, "shutting_down");
      assert.equal(rec.tokenSource, "estimate");
      assert.ok(rec.completionTokens > 0, "the words delivered before the cut are billed");
    }
    const failed = records.filter((r) => r.status === "error");
    assert.deepEqual(failed.map((r) => [r.httpStatus, r.errorCode, r.stream]), [[
      503,
      "shutting_down",
      false,
    ]]);
    assert.equal(records.length, 3);
    assertLedgerConsistent(ledger);
  });
});

Deno.test("start:parallel: SIGTERM stops the listener, and every worker lets its running streams finish", async () => {
  const backend = new GatedOllama({ words: 8, before: 2, delayMs: 20 });
  await withGateway(backend, async ({ store, key, keyId, start }) => {
    const gateway = await start(
      ["run", ...PERMISSIONS, "parallel.ts"],
      { GATEWAY_WORKERS: "2", GATEWAY_SHUTDOWN_GRACE_MS: "120000" },
    );
    const chats = Array.from({ length: 6 }, (_, i) => openChat(gateway.url, key, formatOf(i)));
    await Promise.all(chats.map((c) => c.started));
    await waitFor("6 answers held at the backend", () => backend.waiting === 6);

    gateway.child.kill("SIGTERM");
    // Every worker closes its listener on the signal, and must still finish what it took.
    await waitUntilRefused(gateway.url);
    assert.equal(backend.waiting, 6, "the running answers were still held");
    backend.open();

    const expected = backend.answer;
    (await Promise.all(chats.map((c) => c.body))).forEach((text, i) =>
      assertComplete(formatOf(i), text, expected)
    );
    assert.equal((await gateway.child.status).code, 0);
    const ledger = await readLedger(store);
    assert.deepEqual(recordsOf(ledger, keyId).map((r) => r.status), Array(6).fill("ok"));
    assertLedgerConsistent(ledger);
  });
});
