/**
 * Large request bodies against a gateway process started as the README says (`deno task start`'s own command
 * line, run directly so that its RSS is its own and killing it leaves nothing behind): eight parallel uploads of 20 MiB from one key must keep
 * the process's peak memory growth (VmHWM) within twice `GATEWAY_BODY_MEMORY_BYTES`, and the bodies that do
 * not fit get 503 with `Retry-After` in the client's format. Without the budget all eight are read, parsed and
 * forwarded at once, and the peak grows by some 650 MB. The clients speak raw HTTP, so an answer that comes
 * while their upload is still unfinished is read, not lost.
 */
import assert from "node:assert/strict";
import { admin, type GatewayProcess, startGateway } from "./support/processes.ts";
import { killChild, waitFor } from "./support/chat_streams.ts";
import { chatHead, RawConnection, type RawResponse } from "./support/hostile_wire.ts";

/** `deno task start` without the task runner in between: `deno run`, the runtime flags, `main.ts`. */
const START =
  (JSON.parse(await Deno.readTextFile(new URL("../deno.json", import.meta.url))).tasks.start as string)
    .split(/\s+/).slice(1);
const MiB = 1024 * 1024;
const BUDGET = 256 * MiB;
const BODY_BYTES = 20 * MiB - 1024;
const PARALLEL = 8;
/** Each path answers errors in its own format: OpenAI's, the proxy's, Ollama's. */
const PATHS = ["/v1/chat/completions", "/v1/chat.php", "/api/chat"] as const;

/**
 * A model server that reads each chat body to its end (a byte at a time would not matter: it keeps none) and
 * answers when `open` says, so the bodies being answered hold their place in the budget as long as a test
 * wants.
 */
class HeldBackend {
  #gate = Promise.withResolvers<void>();
  chats = 0;
  readonly #server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const path = new URL(req.url).pathname;
    if (path === "/api/version") return Response.json({ version: "0.33.0" });
    if (path === "/api/tags") return Response.json({ models: [{ name: "m1", model: "m1" }] });
    if (path !== "/api/chat") return Response.json({ error: "not found" }, { status: 404 });
    for await (const _ of req.body!);
    this.chats++;
    await this.#gate.promise;
    return Response.json({
      model: "m1",
      created_at: new Date().toISOString(),
      message: { role: "assistant", content: "ok" },
      done: true,
      done_reason: "stop",
      prompt_eval_count: 1,
      eval_count: 1,
    });
  });

  get url(): string {
    return `http://127.0.0.1:${this.#server.addr.port}`;
  }

  /** Answers every chat from now on, and those waiting. */
  open(): void {
    this.#gate.resolve();
  }

  /** Holds the chats from now on until `open` is called again. */
  hold(): void {
    this.#gate = Promise.withResolvers<void>();
  }

  close(): Promise<void> {
    this.open();
    return this.#server.shutdown();
  }
}

/** The process's current and peak resident memory, MB. */
async function memory(pid: number): Promise<{ rss: number; peak: number }> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)![1]);
  return { rss: kb("VmRSS") / 1024, peak: kb("VmHWM") / 1024 };
}

/** A chat body of exactly `BODY_BYTES`, one long user message. */
function largeBody(): Uint8Array {
  const frame = JSON.stringify({ model: "m1", messages: [{ role: "user", content: "" }], stream: false });
  const pad = BODY_BYTES - new TextEncoder().encode(frame).length;
  return new TextEncoder().encode(frame.replace('"content":""', `"content":"${"x".repeat(pad)}"`));
}

/** Uploads `body` on its own connection and reads the answer, which may come before the upload is done. */
async function upload(url: string, key: string, path: string, body: Uint8Array): Promise<RawResponse> {
  using conn = await RawConnection.open(url);
  await conn.write(chatHead(path, key, `Content-Length: ${body.length}\r\n`));
  // A refused upload is cut short by the gateway closing the connection: that write then fails, as it may.
  const sending = conn.write(body);
  const response = await conn.response(120_000);
  await sending;
  assert.ok(response, `${path}: no answer`);
  return response;
}

/** The body, its chunked framing taken off: the gateway streams a refusal that closes its connection. */
function bodyText(res: RawResponse): string {
  if (res.headers.get("transfer-encoding") !== "chunked") return res.body;
  let text = "";
  for (let at = 0;;) {
    const lineEnd = res.body.indexOf("\r\n", at);
    const size = parseInt(res.body.slice(at, lineEnd), 16);
    if (!size) return text;
    text += res.body.slice(lineEnd + 2, lineEnd + 2 + size);
    at = lineEnd + 2 + size + 2;
  }
}

/** A refusal in the format of the path's clients. */
function assertBudgetRefusal(res: RawResponse, path: string): void {
  assert.equal(res.status, 503, `${path}: ${res.body}`);
  assert.match(res.headers.get("retry-after") ?? "", /^[1-9]\d*$/, `${path}: Retry-After`);
  assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
  const body = JSON.parse(bodyText(res));
  if (path === "/api/chat") {
    // Ollama's clients read a plain string.
    assert.equal(typeof body.error, "string", res.body);
    assert.equal(body.code, "body_memory_full");
    assert.match(body.error, /try again in \d+ s/);
  } else {
    assert.equal(body.error.code, "body_memory_full", res.body);
    assert.equal(body.error.type, path === "/v1/chat/completions" ? "api_error" : "proxy_error");
    assert.match(body.error.message, /try again in \d+ s/);
  }
}

async function withGateway(
  fn: (gateway: GatewayProcess, key: string, backend: HeldBackend) => Promise<void>,
) {
  const dir = await Deno.makeTempDir();
  const backend = new HeldBackend();
  let gateway: GatewayProcess | undefined;
  try {
    const env = { GATEWAY_KV: `${dir}/store.kv` };
    // Slots enough for every upload: only the body budget may hold any of them back.
    await admin(env, "server", "add", "--name", "a", "--url", backend.url, "--model", "m1", "--slots", "16");
    const { key } = await admin(env, "key", "create", "--model", "m1");
    gateway = await startGateway({ ...env, GATEWAY_BODY_MEMORY_BYTES: String(BUDGET) }, START);
    await fn(gateway, key, backend);
  } finally {
    if (gateway) await killChild(gateway.child);
    await backend.close();
    await Deno.remove(dir, { recursive: true });
  }
}

/** A few small chats first, so the baseline is a gateway that has served, not one still loading code. */
async function warmUp(url: string, key: string): Promise<void> {
  for (let i = 0; i < 20; i++) {
    const res = await fetch(`${url}/v1/chat/completions`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${key}` },
      body: JSON.stringify({ model: "m1", messages: [{ role: "user", content: "hi" }] }),
    });
    assert.equal(res.status, 200, await res.text());
  }
}

function report(what: string, before: { rss: number }, after: { rss: number; peak: number }): number {
  const growth = after.peak - before.rss;
  console.log(
    `${what}: RSS ${before.rss.toFixed(0)} MB before, ${after.rss.toFixed(0)} MB after, peak ` +
      `${after.peak.toFixed(0)} MB: grew ${growth.toFixed(0)} MB at most; budget ${BUDGET / MiB} MiB`,
  );
  return growth * 1024 * 1024;
}

Deno.test("8 parallel 20 MiB bodies: the ones that fit are served, peak memory within twice the budget", async () => {
  await withGateway(async (gateway, key, backend) => {
    backend.open();
    await warmUp(gateway.url, key);
    const pid = gateway.child.pid;
    const before = await memory(pid);
    const body = largeBody();
    const answers = await Promise.all(
      Array.from({ length: PARALLEL }, (_, i) => upload(gateway.url, key, PATHS[i % PATHS.length], body)),
    );
    const growth = report("8 parallel, answered at once", before, await memory(pid));
    console.log(`statuses: ${answers.map((res) => res.status).join(" ")}`);
    // Two fit at once; the others wait for them, and each is served or, past its wait, refused.
    const served = answers.filter((res) => res.status === 200).length;
    answers.forEach((res, i) => res.status === 200 || assertBudgetRefusal(res, PATHS[i % PATHS.length]));
    assert.ok(served >= 2, `${served} of ${PARALLEL} served`);
    assert.ok(growth <= 2 * BUDGET, `the peak grew by ${(growth / MiB).toFixed(0)} MiB`);
  });
});

Deno.test("bodies that do not fit while others are held get 503 with Retry-After in their client's format", async () => {
  await withGateway(async (gateway, key, backend) => {
    backend.open();
    await warmUp(gateway.url, key);
    backend.hold();
    const chatsBefore = backend.chats;
    const pid = gateway.child.pid;
    const before = await memory(pid);
    const body = largeBody();
    const uploads = Array.from({ length: PARALLEL }, (_, i) => {
      const path = PATHS[i % PATHS.length];
      return upload(gateway.url, key, path, body).then((res) => ({ path, res }));
    });
    // The budget holds two of these at six bytes a byte: those two reach the backend and are held there; the
    // six others wait for them, cannot come in, and are refused.
    let settled = 0;
    for (const answer of uploads) answer.then(() => settled++, () => settled++);
    await waitFor("six answers", () => settled >= PARALLEL - 2, 120_000);
    backend.open();
    const answers = await Promise.all(uploads);
    const growth = report("8 parallel, two held", before, await memory(pid));
    assert.equal(backend.chats - chatsBefore, 2);
    assert.equal(answers.filter(({ res }) => res.status === 200).length, 2);
    for (const { path, res } of answers) if (res.status !== 200) assertBudgetRefusal(res, path);
    assert.ok(growth <= 2 * BUDGET, `the peak grew by ${(growth / MiB).toFixed(0)} MiB`);
  });
});
