/**
 * The start-up warm-up (lib/warm_up/): its chats are answered, and it leaves no trace a user could see. A real
 * gateway process warms up before it listens, and afterwards its store holds only what the admin wrote, its
 * model servers received no chat, /metrics counts no request, and the first real request leaves the one
 * usage record the spec promises. Whether the code it ran is then faster is the bench's to show (first byte
 * of a just-started gateway), not a timed test's.
 */
import assert from "node:assert/strict";
import { defaultConfig } from "../lib/config.ts";
import { warmUp } from "../lib/warm_up/mod.ts";
import { FakeOllama } from "./fakes/fake_ollama.ts";
import { admin, chat, type GatewayProcess, startGateway } from "./support/processes.ts";
import { killChild } from "./support/chat_streams.ts";
import { freePort } from "./support/listening_ports.ts";

Deno.test("a warm-up serves every chat it sends, for both kinds of server, and closes all it opened", async () => {
  // A queue bound of one would refuse some of a round's chats if the warm-up kept it.
  const report = await warmUp(defaultConfig({ logLevel: "warn", queueMax: 1 }), {
    kinds: new Set(["ollama", "openai"]),
    rounds: 3,
  });
  // Four chats a round (A and B, streamed and whole) for each kind of server.
  assert.equal(report.requests, 3 * 4 * 2);
  assert.equal(report.failed, 0);
});

/** Every `gateway_requests_total` series' value, summed. */
function requestsCounted(metricsText: string): number {
  return metricsText.split("\n")
    .filter((line) => line.startsWith("gateway_requests_total"))
    .reduce((sum, line) => sum + Number(line.split(" ").at(-1)), 0);
}

async function withStartedGateway(
  env: Record<string, string>,
  fn: (
    gateway: GatewayProcess,
    secret: string,
    fake: FakeOllama,
    base: Record<string, string>,
  ) => Promise<void>,
) {
  const dir = await Deno.makeTempDir();
  const fake = FakeOllama.start("a");
  const base = { GATEWAY_KV: `${dir}/store.kv` };
  let gateway: GatewayProcess | undefined;
  try {
    await admin(base, "server", "add", "--name", "a", "--url", fake.url, "--model", "m1");
    await admin(base, "user", "add", "--name", "u", "--daily-tokens", "100000");
    const { key } = await admin(base, "key", "create", "--model", "m1", "--user", "u", "--rpm", "1000");
    gateway = await startGateway({ ...base, ...env });
    await fn(gateway, key, fake, base);
  } finally {
    if (gateway) await killChild(gateway.child);
    await fake.close();
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("a gateway warms up before it listens and leaves nothing of it in the store, the servers or /metrics", async () => {
  const metricsPort = freePort();
  await withStartedGateway(
    { GATEWAY_METRICS_PORT: String(metricsPort) },
    async (gateway, secret, fake, base) => {
      assert.match(gateway.output(), /gateway\.start: .*warmUpMs=\d+/);
      assert.doesNotMatch(gateway.output(), /warm-up/);
      assert.equal(fake.chats.length, 0, "the warm-up sent a chat to a real model server");
      const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
      const before = await (await fetch(metricsUrl)).text();
      assert.equal(requestsCounted(before), 0);
      assert.doesNotMatch(before, /warm-up/);

      assert.equal(await chat(gateway.url, secret), 200);
      assert.equal(requestsCounted(await (await fetch(metricsUrl)).text()), 1);
      assert.equal((await gateway.stop()).code, 0);

      assert.deepEqual((await admin(base, "server", "list")).map((s: { name: string }) => s.name), ["a"]);
      assert.deepEqual((await admin(base, "user", "list")).map((u: { name: string }) => u.name), ["u"]);
      assert.equal((await admin(base, "key", "list")).length, 1);
      const { records, totals } = await admin(base, "usage");
      assert.equal(records.length, 1, "one request, one record");
      assert.equal(records[0].server, "a");
      assert.deepEqual(Object.keys(totals.users), ["u"]);
      assert.equal(fake.chats.length, 1);
    },
  );
});

Deno.test("GATEWAY_WARM_UP=0 starts the gateway without a warm-up", async () => {
  await withStartedGateway({ GATEWAY_WARM_UP: "0" }, async (gateway, secret) => {
    assert.doesNotMatch(gateway.output(), /warmUpMs=/);
    assert.equal(await chat(gateway.url, secret), 200);
  });
});
