/**
 * A client that reads the start of a long streamed answer and then stops reading, its connection left open,
 * against a gateway process started as the README says (its own listener, which is what closes the
 * connection). Its answer is tens of MB, far more than the socket buffers and the runtime's hold, so the
 * gateway learns of the stop only through backpressure: it stops being asked for more. Within the stall
 * timeout the stream must be cut: the server slot freed, the backend's stream cancelled, the request recorded
 * `partial` with the tokens sent so far. A gateway that watches only the backend would keep both forever.
 */
import assert from "node:assert/strict";
import { admin, type GatewayProcess, startGateway } from "./support/processes.ts";
import { killChild, waitFor } from "./support/chat_streams.ts";
import { connectTo, readUntilClosed } from "./support/raw_http.ts";
import { readLedger } from "./support/ledger_check.ts";
import { FakeOllama } from "./fakes/fake_ollama.ts";
import { estimateTokens } from "../lib/chat/token_estimate.ts";

const STALL_MS = 1_000;
const ADMIN_TOKEN = "slow-reader-admin-token-0123456789";
/** Answer chunks: at some 200 bytes an event, about 25 MB of stream. */
const WORDS = 120_000;
const WORD = "w" + "x".repeat(30) + " ";
const GATEWAY = ["run", "--allow-net", "--allow-env", "--allow-read", "--allow-write", "main.ts"];

function chatRequest(key: string): string {
  const body = JSON.stringify({ model: "m1", messages: [{ role: "user", content: "hi" }], stream: true });
  return `POST /v1/chat/completions HTTP/1.1\r\nHost: gateway\r\nContent-Type: application/json\r\n` +
    `Authorization: Bearer ${key}\r\nContent-Length: ${new TextEncoder().encode(body).length}\r\n\r\n${body}`;
}

async function inFlight(url: string): Promise<number> {
  const res = await fetch(`${url}/admin/status`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
  assert.equal(res.status, 200);
  const { health } = await res.json();
  return (health.servers as { inFlight: number }[]).reduce((n, s) => n + s.inFlight, 0);
}

async function waitForIdle(url: string, limitMs: number): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (await inFlight(url) > 0) {
    if (Date.now() > deadline) throw new Error("the server slot was never freed");
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Reads the answer's head and at least `bytes` of its body, then returns, leaving the rest unread. */
async function readStart(conn: Deno.Conn, bytes: number): Promise<string> {
  const buffer = new Uint8Array(64);
  const decoder = new TextDecoder();
  let text = "";
  for (;;) {
    const n = await conn.read(buffer);
    if (n === null) throw new Error(`closed early: ${text}`);
    text += decoder.decode(buffer.subarray(0, n), { stream: true });
    const head = text.indexOf("\r\n\r\n");
    if (head >= 0 && text.length - head - 4 >= bytes) return text;
  }
}

Deno.test("a client that stops reading a long stream loses it: slot freed, backend cancelled, partial", async () => {
  const dir = await Deno.makeTempDir();
  const store = `${dir}/store.kv`;
  const fake = FakeOllama.start("a");
  fake.reply = () => ({ content: WORD.repeat(WORDS) });
  let gateway: GatewayProcess | undefined;
  let conn: Deno.Conn | undefined;
  try {
    const env = { GATEWAY_KV: store };
    await admin(env, "server", "add", "--name", "a", "--url", fake.url, "--model", "m1");
    const { key, id } = await admin(env, "key", "create", "--model", "m1");
    gateway = await startGateway(
      { ...env, GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN, GATEWAY_CLIENT_STALL_TIMEOUT_MS: String(STALL_MS) },
      GATEWAY,
    );

    // A client that reads is never cut, however long the answer: the whole of it arrives.
    const whole = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${key}` },
      body: JSON.stringify({ model: "m1", messages: [{ role: "user", content: "hi" }], stream: true }),
    });
    const answer = await whole.text();
    assert.ok(answer.trimEnd().endsWith("data: [DONE]"), answer.slice(-300));
    assert.equal(fake.streamsCompleted, 1);
    const answerBytes = answer.length;

    conn = await connectTo(gateway.url);
    await conn.write(new TextEncoder().encode(chatRequest(key)));
    const start = await readStart(conn, 200);
    assert.match(start, /^HTTP\/1\.1 200/);
    const stoppedAt = performance.now();

    await waitFor("the backend's stream to be cancelled", () => fake.streamsCancelled === 1, 60_000);
    await waitForIdle(gateway.url, 60_000);
    const freedMs = performance.now() - stoppedAt;

    // What the socket buffers held arrives, then the connection ends without the answer's end.
    const { text: rest } = await readUntilClosed(conn, 60_000);
    conn = undefined;
    assert.ok(!rest.includes("[DONE]"));
    assert.equal(fake.streamsCompleted, 1, "the stalled stream never ran to its end");
    const unread = start.length + rest.length;
    console.log(
      `stall timeout ${STALL_MS} ms: slot freed and backend cancelled ${freedMs.toFixed(0)} ms after the ` +
        `client stopped; ${(unread / 1e6).toFixed(1)} MB had reached the client's side of a ` +
        `${(answerBytes / 1e6).toFixed(1)} MB answer`,
    );
    // The stop was noticed through full buffers, not through a short answer ending.
    assert.ok(unread > 256 * 1024, `only ${unread} bytes were buffered`);
    assert.ok(unread < answerBytes / 2, `${unread} of ${answerBytes} bytes were sent`);

    assert.equal((await gateway.stop()).code, 0);
    gateway = undefined;
    const records = [...(await readLedger(store)).records.values()].filter((r) => r.keyId === id);
    assert.deepEqual(records.map((r) => r.status).sort(), ["ok", "partial"]);
    const cut = records.find((r) => r.status === "partial")!;
    assert.equal(cut.errorCode, "client_stalled");
    assert.equal(cut.httpStatus, 200);
    // Billed as a broken stream is: an estimate of what was sent, not the whole answer.
    assert.ok(cut.completionTokens > 0, "the tokens sent before the cut are billed");
    assert.ok(cut.completionTokens < estimateTokens(WORDS * WORD.length), `${cut.completionTokens} tokens`);
  } finally {
    try {
      conn?.close();
    } catch {
      // closed by the gateway already
    }
    if (gateway) await killChild(gateway.child);
    await fake.close();
    await Deno.remove(dir, { recursive: true });
  }
});
