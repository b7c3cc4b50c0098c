/**
 * A backend failing in the middle of a Responses stream, for each backend kind and fault (crash, garbage, the
 * server's own error line, a stall past the idle time): the client gets what came, then `response.failed`
 * with the error and the usage of the request's record (partial, billed by estimate); the openai client's
 * stream helper resolves with that failed Response; another server is not tried. The same faults on the chat
 * paths are tests/mid_stream_faults_test.ts.
 */
import assert from "node:assert/strict";
import type { BackendKind } from "../lib/store/records.ts";
import { TestGateway } from "./harness.ts";
import type { FakeBackend, StreamFault } from "./fakes/fake_backend.ts";
import { FakeOllama } from "./fakes/fake_ollama.ts";
import { FakeOpenAI } from "./fakes/fake_openai.ts";
import { openaiClient } from "./support/clients.ts";

const FAULTS: { kind: StreamFault["kind"]; message: RegExp }[] = [
  { kind: "crash", message: /broke off/ },
  { kind: "garbage", message: /malformed stream/ },
  { kind: "error-line", message: /CUDA error: out of memory/ },
  { kind: "stall", message: /model server sent nothing for 300 ms/ },
];
const IDLE_MS = 300;

for (const backend of ["ollama", "openai"] as BackendKind[]) {
  for (const { kind, message } of FAULTS) {
    Deno.test(`responses: a ${backend} stream that breaks (${kind}) ends in response.failed, billed as shown`, async () => {
      const start = (name: string): FakeBackend =>
        backend === "ollama" ? FakeOllama.start(name) : FakeOpenAI.start(name, { models: ["m1"] });
      const fakes = { a: start("a"), b: start("b") };
      const gw = await TestGateway.start({
        random: () => 0.5,
        config: kind === "stall" ? { idleTimeoutMs: IDLE_MS } : {},
      });
      try {
        for (const [name, fake] of Object.entries(fakes)) {
          await gw.addServer({ name, url: fake.url, kind: backend, weight: name === "a" ? 100 : 1 });
        }
        const key = await gw.key();
        fakes.a.reply = () => ({ content: "alpha beta gamma delta epsilon zeta" });
        fakes.a.streamFault = { kind, after: 2 };
        const final = await openaiClient(gw.url, key).responses.stream({ model: "x", input: "Go" })
          .finalResponse();
        assert.equal(final.status, "failed");
        assert.equal(final.error?.code as string, "bad_gateway");
        assert.match(final.error!.message, message);
        assert.equal(final.output_text, "alpha beta ");
        assert.equal(fakes.b.chats.length, 0, "no other server was tried once bytes were sent");
        assert.equal(gw.usage.length, 1);
        const rec = gw.usage[0];
        assert.deepEqual([rec.format, rec.status, rec.tokenSource], ["responses", "partial", "estimate"]);
        assert.deepEqual(
          [final.usage!.input_tokens, final.usage!.output_tokens],
          [rec.promptTokens, rec.completionTokens],
        );
      } finally {
        await gw.close();
        await fakes.a.close();
        await fakes.b.close();
      }
    });
  }
}
