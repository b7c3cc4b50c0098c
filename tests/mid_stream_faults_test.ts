/**
 * A backend that fails in the middle of a stream, through the gateway: once bytes went out, failover can no
 * longer hide it, so every client path's stream ends with what came and then an error (never a clean
 * finish), the official clients raise it, another server is not tried, and the request is recorded as
 * partial with the delivered tokens billed by estimate. One table: a row per backend kind and fault. What
 * each adapter makes of a fault is tests/contract/stream_faults_test.ts; a fault before the first chunk,
 * which fails over, is in tests/streaming_test.ts.
 */
import assert from "node:assert/strict";
import type { BackendKind } from "../lib/store/records.ts";
import { TestGateway } from "./harness.ts";
import type { FakeBackend, StreamFault } from "./fakes/fake_backend.ts";
import { FakeOllama } from "./fakes/fake_ollama.ts";
import { FakeOpenAI } from "./fakes/fake_openai.ts";
import {
  assertClientsRaise,
  type FormatBPath,
  streamEndsInError,
  type StreamPath,
} from "./support/streams.ts";

const BACKEND_KEY = "sk-vllm-backend-9c1e";

interface Row {
  backend: BackendKind;
  kind: StreamFault["kind"];
  /** What the client is told, in every format. */
  message: RegExp;
  /** The format-B path this row streams on besides /v1/chat/completions and /api/chat. */
  b: FormatBPath;
}

const BACKENDS = [
  { backend: "ollama", b: "/api/v1/chat.php" },
  { backend: "openai", b: "/v1/chat.php" },
] as const;

const FAULTS = [
  { kind: "crash", message: /broke off/ },
  { kind: "garbage", message: /malformed stream/ },
  { kind: "error-line", message: /CUDA error: out of memory/ },
  { kind: "stall", message: /model server sent nothing for 300 ms/ },
] as const;

const ROWS: Row[] = BACKENDS.flatMap((b) => FAULTS.map((f) => ({ ...b, ...f })));

/** Idle time allowed between two chunks: what ends a stalled stream; the other rows never come near it. */
const IDLE_MS = 300;

function startFake(backend: BackendKind, name: string): FakeBackend {
  return backend === "ollama" ? FakeOllama.start(name) : FakeOpenAI.start(name, { apiKey: BACKEND_KEY });
}

/** A gateway whose draw always puts "a" (weight 100) before "b", both of one backend kind. */
async function twoServers(row: Row) {
  const fakes = { a: startFake(row.backend, "a"), b: startFake(row.backend, "b") };
  const gw = await TestGateway.start({
    random: () => 0.5,
    config: row.kind === "stall" ? { idleTimeoutMs: IDLE_MS } : {},
  });
  for (const [name, fake] of Object.entries(fakes)) {
    await gw.addServer({
      name,
      url: fake.url,
      kind: row.backend,
      weight: name === "a" ? 100 : 1,
      apiKey: BACKEND_KEY,
    });
  }
  return {
    gw,
    ...fakes,
    async [Symbol.asyncDispose]() {
      await gw.close();
      // A stalled stream is let go when its server closes; the gateway gave up on it long before.
      await fakes.a.close();
      await fakes.b.close();
    },
  };
}

for (const row of ROWS) {
  Deno.test(`a ${row.backend} backend's stream fault (${row.kind}) after two chunks ends every client's stream with an error, billed as partial`, async () => {
    await using s = await twoServers(row);
    const key = await s.gw.key();
    s.a.reply = () => ({ content: "alpha beta gamma delta" });
    s.a.streamFault = { after: 2, kind: row.kind };

    const paths: StreamPath[] = ["/v1/chat/completions", row.b, "/api/chat"];
    for (const path of paths) {
      const message = await streamEndsInError(s.gw, key, path, ["alpha ", "beta "], `${row.kind} on ${path}`);
      assert.match(message, row.message, path);
      assert.doesNotMatch(message, /127\.0\.0\.1|http:/, "no backend address");
    }
    await assertClientsRaise(s.gw.url, key, row.b, row.message);
    const streams = paths.length + 2;

    assert.equal(s.b.chats.length, 0, "no failover after bytes were sent");
    assert.equal(s.a.chats.length, streams);
    assert.equal(s.gw.usage.length, streams);
    for (const record of s.gw.usage) {
      assert.equal(record.status, "partial");
      assert.equal(record.errorCode, "bad_gateway");
      assert.equal(record.server, "a");
      assert.equal(record.tokenSource, "estimate");
      assert.equal(record.completionTokens, Math.ceil("alpha beta ".length / 4));
      assert.equal(record.promptTokens, Math.ceil("hello there".length / 4));
    }
  });
}
