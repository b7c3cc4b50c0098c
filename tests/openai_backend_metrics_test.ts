/**
 * What an OpenAI-compatible server's /metrics tells the gateway's probe: vLLM's running and waiting requests
 * show how many it runs at once and that it holds its model loaded; llama.cpp's names, or no /metrics, tell
 * nothing of the kind, so nothing is assumed. One table, a row per dialect of the fake server.
 */
import assert from "node:assert/strict";
import { TestGateway } from "./harness.ts";
import { FakeOpenAI, type MetricsDialect } from "./fakes/fake_openai.ts";
import { eventually } from "./support/wait_for.ts";

const ROWS: { metrics: MetricsDialect; shows: boolean }[] = [
  { metrics: "vllm", shows: true },
  { metrics: "llama.cpp", shows: false },
  { metrics: "none", shows: false },
];

for (const { metrics, shows } of ROWS) {
  Deno.test(`an OpenAI-compatible server with ${metrics} metrics, one running and one waiting: ${shows ? "its parallelism and loaded model are seen" : "nothing is assumed"}`, async () => {
    await using fake = FakeOpenAI.start("vllm", { metrics });
    fake.slots = 1;
    fake.reply = () => ({ content: "one two three" });
    // The first answer stalls after a chunk and holds the only slot; the second waits behind it.
    fake.streamFault = { after: 1, kind: "stall" };
    const gw = await TestGateway.start();
    const held = new AbortController();
    try {
      await gw.addServer({ name: "vllm", url: `${fake.url}/v1`, kind: "openai", models: [{ tag: "m1" }] });
      const direct = [1, 2].map(() =>
        fetch(`${fake.url}/v1/chat/completions`, {
          method: "POST",
          body: JSON.stringify({ model: "m1", messages: [{ role: "user", content: "hi" }], stream: true }),
          signal: held.signal,
        }).catch(() => undefined)
      );
      await eventually("one running, one waiting", () => fake.running === 1 && fake.waiting === 1);
      if (metrics !== "none") {
        const text = await (await fetch(`${fake.url}/metrics`)).text();
        const running = metrics === "vllm" ? "vllm:num_requests_running" : "llamacpp:requests_processing";
        assert.match(text, new RegExp(`^${running}(\\{[^}]*\\})? 1\\.0$`, "m"));
      }
      await gw.deps.prober!.probeNow();
      const status = gw.deps.servers.status().find((s) => s.name === "vllm")!;
      if (shows) {
        assert.equal(status.discoveredSlots, 1);
        assert.equal(status.slotsSource, "discovered");
        assert.deepEqual(status.loadedModels, ["m1"], "vLLM holds its model loaded");
      } else {
        assert.equal(status.discoveredSlots, undefined);
        assert.notEqual(status.slotsSource, "discovered");
        assert.equal(status.loadedModels, undefined, "a server that is not vLLM is not assumed to hold it");
      }
      held.abort();
      await Promise.all(direct);
    } finally {
      held.abort();
      await gw.close();
    }
  });
}
