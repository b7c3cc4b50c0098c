/**
 * Streams release what they hold when they end, however they end. A real gateway process streams a few
 * thousand answers of one ending kind in both formats, and its JS heap after full collections (read over its
 * inspector) must stay near where it was before. A stream that kept its backend reader, buffers or timers
 * until the idle timeout would leave tens of KB behind each, far beyond the bound.
 */
import assert from "node:assert/strict";
import { admin, type GatewayProcess, startGateway } from "./support/processes.ts";
import { killChild } from "./support/chat_streams.ts";
import { Inspector } from "./support/inspector.ts";
import { FakeOllama } from "./fakes/fake_ollama.ts";

const PATHS = ["/v1/chat/completions", "/v1/chat.php"];
const STREAMS = 2_000;
const WARM_UP = 300;
const PARALLEL = 32;
/** What thousands of ended streams may leave on the heap: caches and pools settling, not a per-stream cost. */
const BOUND_BYTES = 4 * 1024 * 1024;

type Ending = "done" | "backend-break" | "client-gone" | "idle-timeout";

/** One streamed chat, read as the ending kind needs: to its end, or only its first chunk. */
async function oneStream(url: string, key: string, path: string, ending: Ending): Promise<void> {
  const res = await fetch(`${url}${path}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${key}` },
    body: JSON.stringify({ messages: [{ role: "user", content: "hi" }], stream: true }),
  });
  assert.equal(res.status, 200, await res.clone().text());
  const reader = res.body!.getReader();
  if (ending === "client-gone") {
    await reader.read();
    await reader.cancel();
    return;
  }
  let text = "";
  const decoder = new TextDecoder();
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
    text += decoder.decode(chunk.value, { stream: true });
  }
  const complete = text.includes("[DONE]") || text.includes('"done":true');
  assert.equal(complete, ending === "done", text);
}

async function streams(url: string, key: string, count: number, ending: Ending): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      await oneStream(url, key, PATHS[i % 2], ending);
    }
  };
  await Promise.all(Array.from({ length: PARALLEL }, worker));
}

function arrange(fake: FakeOllama, ending: Ending): void {
  fake.streamFault = undefined;
  fake.chunkDelayMs = 0;
  fake.reply = () => ({ content: "one two three four five six seven eight" });
  if (ending === "backend-break") fake.streamFault = { after: 2, kind: "crash" };
  if (ending === "idle-timeout") fake.streamFault = { after: 2, kind: "stall" };
  if (ending === "client-gone") fake.chunkDelayMs = 5;
}

async function heapGrowth(ending: Ending, env: Record<string, string> = {}): Promise<number> {
  const dir = await Deno.makeTempDir();
  const fake = FakeOllama.start("a");
  // Broken streams count against the server; its breaker must not turn the rest of the run into 503s.
  const base = { GATEWAY_KV: `${dir}/store.kv`, GATEWAY_BREAKER_FAILURES: "1000000000" };
  let gateway: GatewayProcess | undefined;
  let inspector: Inspector | undefined;
  try {
    await admin(base, "server", "add", "--name", "a", "--url", fake.url, "--model", "m1");
    const { key } = await admin(base, "key", "create", "--model", "m1");
    gateway = await startGateway({ ...base, ...env }, [
      "run",
      "--inspect=127.0.0.1:0",
      "--allow-net",
      "--allow-env",
      "--allow-read",
      "--allow-write",
      "main.ts",
    ]);
    inspector = await Inspector.connect(gateway.output());
    arrange(fake, ending);
    await streams(gateway.url, key, WARM_UP, ending);
    const before = await inspector.heapAfterGc();
    await streams(gateway.url, key, STREAMS, ending);
    const after = await inspector.heapAfterGc();
    console.log(`${ending}: heap ${(before / 1e6).toFixed(1)} MB → ${(after / 1e6).toFixed(1)} MB`);
    return after - before;
  } finally {
    inspector?.close();
    if (gateway) await killChild(gateway.child);
    await fake.close();
    await Deno.remove(dir, { recursive: true });
  }
}

for (const ending of ["done", "backend-break", "client-gone"] as const) {
  Deno.test(`${STREAMS} streams that end by ${ending} leave the heap where it was`, async () => {
    const growth = await heapGrowth(ending);
    assert.ok(growth < BOUND_BYTES, `the heap grew by ${(growth / 1024).toFixed(0)} KiB`);
  });
}

Deno.test(`${STREAMS} streams that end by the idle timeout leave the heap where it was`, async () => {
  const growth = await heapGrowth("idle-timeout", { GATEWAY_IDLE_TIMEOUT_MS: "100" });
  assert.ok(growth < BOUND_BYTES, `the heap grew by ${(growth / 1024).toFixed(0)} KiB`);
});
