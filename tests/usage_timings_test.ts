/**
 * The times a usage record holds include the server's own: a server that takes a while before its first byte
 * shows in the record's time to first byte (streams) and whole latency, whichever backend kind and format.
 * Lower bounds only: a record can never be faster than the server, while how much slower depends on the
 * machine.
 */
import assert from "node:assert/strict";
import type { BackendKind } from "../lib/store/records.ts";
import { TestGateway, USER_HELLO } from "./harness.ts";
import { FakeOllama } from "./fakes/fake_ollama.ts";
import { FakeOpenAI } from "./fakes/fake_openai.ts";

const DELAY_MS = 40;
/** A timer may fire up to a millisecond early by the clock the gateway reads. */
const CLOCK_SLACK_MS = 1;

const ROWS = (["ollama", "openai"] as const).flatMap((backend: BackendKind) =>
  [
    { path: "/v1/chat/completions", stream: false },
    { path: "/v1/chat/completions", stream: true },
    { path: "/v1/chat.php", stream: true },
  ].map((r) => ({ backend, ...r }))
);

for (const { backend, path, stream } of ROWS) {
  Deno.test(`a ${backend} server ${DELAY_MS} ms to its first byte, ${path}${stream ? " streamed" : ""}: the record's times include it`, async () => {
    await using fake = backend === "ollama" ? FakeOllama.start("a") : FakeOpenAI.start("a");
    fake.firstByteDelayMs = DELAY_MS;
    const gw = await TestGateway.start();
    try {
      await gw.addServer({ name: "a", url: fake.url, kind: backend });
      const res = await gw.post(path, await gw.key(), { messages: USER_HELLO, stream });
      assert.equal(res.status, 200);
      await res.text();
      const [record] = gw.usage;
      assert.equal(record.status, "ok");
      assert.ok(record.latencyMs >= DELAY_MS - CLOCK_SLACK_MS, `latency ${record.latencyMs} ms`);
      if (stream) {
        assert.ok(record.ttfbMs! >= DELAY_MS - CLOCK_SLACK_MS, `time to first byte ${record.ttfbMs} ms`);
        assert.ok(record.latencyMs >= record.ttfbMs!);
      }
    } finally {
      await gw.close();
    }
  });
}
