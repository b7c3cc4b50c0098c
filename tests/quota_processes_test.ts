/**
 * Token quotas and concurrency limits across two gateway processes on one store: 20 streams at once on a
 * key's and on a user's small daily quota bill at most the quota and one prompt estimate, `--max-concurrent`
 * refuses the request beyond it, and a gateway that dies gives its places back after its lease.
 */
import assert from "node:assert/strict";
import { listUsage, readTotals } from "../lib/usage/mod.ts";
import { FakeOllama } from "./fakes/fake_ollama.ts";
import { USER_HELLO } from "./harness.ts";
import { admin, type GatewayProcess, startGateway } from "./support/processes.ts";
import {
  A,
  assertServedOrRefused,
  B,
  billedOf,
  burst,
  LONG_ANSWER,
  OLLAMA,
  openStream,
  PROMPT,
  streamed,
} from "./support/quota_streams.ts";
import { eventually } from "./support/wait_for.ts";

/** Two gateway processes on one store file, with one fake backend of long answers. */
async function twoGateways(
  env: Record<string, string>,
  fn: (ctx: {
    gateways: GatewayProcess[];
    env: Record<string, string>;
    fake: FakeOllama;
    kill: (g: GatewayProcess) => Promise<void>;
  }) => Promise<void>,
) {
  const dir = await Deno.makeTempDir();
  const fake = FakeOllama.start("shared");
  fake.reply = LONG_ANSWER;
  const store = { GATEWAY_KV: `${dir}/store.kv`, ...env };
  const gateways: GatewayProcess[] = [];
  const killed = new Set<GatewayProcess>();
  const kill = async (g: GatewayProcess) => {
    killed.add(g);
    g.child.kill("SIGKILL");
    await g.child.status;
  };
  try {
    await admin(store, "server", "add", "--name", "gpu1", "--url", fake.url, "--model", "m1");
    // Run directly, not through `deno task`, so the process a test kills is the gateway itself.
    const args = ["run", "--allow-net", "--allow-env", "--allow-read", "--allow-write", "main.ts"];
    gateways.push(...await Promise.all([startGateway(store, args), startGateway(store, args)]));
    await fn({ gateways, env: store, fake, kill });
  } finally {
    await Promise.all(gateways.filter((g) => !killed.has(g)).map((g) => g.stop()));
    await fake.close();
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("two gateways on one store: 20 streams at once on a key's and on a user's daily quota of 100 bill at most it and one prompt estimate", async () => {
  await twoGateways({}, async ({ gateways, env }) => {
    const key = await admin(env, "key", "create", "--model", "m1", "--daily-tokens", "100");
    await admin(env, "user", "add", "--name", "ana", "--daily-tokens", "100");
    const ofAna = [
      await admin(env, "key", "create", "--model", "m1", "--user", "ana"),
      await admin(env, "key", "create", "--model", "m1", "--user", "ana"),
    ];
    const urls = gateways.map((g) => g.url);
    assertServedOrRefused(await burst(urls, [key.key], 20));
    assertServedOrRefused(await burst(urls, ofAna.map((k) => k.key), 20));
    // SIGTERM flushes each ledger; then the store holds every record and every token.
    assert.deepEqual((await Promise.all(gateways.map((g) => g.stop()))).map((s) => s.code), [0, 0]);
    const kv = await Deno.openKv(env.GATEWAY_KV);
    try {
      const now = new Date();
      const keyBilled = billedOf(await listUsage(kv, { keyId: key.id, limit: 1000 }));
      const userBilled = billedOf(await listUsage(kv, { user: "ana", limit: 1000 }));
      assert.equal((await readTotals(kv, "key", key.id, now)).day, keyBilled);
      assert.equal((await readTotals(kv, "user", "ana", now)).day, userBilled);
      assert.ok(keyBilled <= 100 + PROMPT, `key billed ${keyBilled}`);
      assert.ok(userBilled <= 100 + PROMPT, `user billed ${userBilled}`);
      assert.equal(
        (await kv.list({ prefix: ["holds"] }).next()).done,
        true,
        "stopping gateways hold nothing",
      );
      console.log(`two processes, quota 100: key billed ${keyBilled}, user (two keys) billed ${userBilled}`);
    } finally {
      kv.close();
    }
  });
});

Deno.test("two gateways on one store: --max-concurrent 2 refuses the third, and a gateway that dies gives its places back after the lease", async () => {
  await twoGateways({ GATEWAY_HOLD_LEASE_MS: "1500" }, async ({ gateways: [a, b], env, fake, kill }) => {
    fake.chunkDelayMs = 20;
    const { key, id } = await admin(env, "key", "create", "--model", "m1", "--max-concurrent", "2");
    const held = [await openStream(a.url, A, key), await openStream(b.url, B, key)];
    for (const g of [a, b]) {
      const refused = await streamed(g.url, OLLAMA, key);
      assert.equal(refused.status, 429, refused.text);
      assert.equal(JSON.parse(refused.text).code, "concurrency_limit");
      assert.equal(refused.retryAfter, "1");
    }
    // Ended on b: a may admit once b published the place it gave back.
    await held[1].end();
    let third: { end: () => Promise<void> } | undefined;
    await eventually("a place given back on the other gateway", async () => {
      const res = await fetch(`${a.url}${A}`, {
        method: "POST",
        headers: { "Content-Type": "application/json", Authorization: `Bearer ${key}` },
        body: JSON.stringify({ model: "x", messages: USER_HELLO, stream: true }),
      });
      if (res.status !== 200) {
        await res.body?.cancel();
        return false;
      }
      const reader = res.body!.getReader();
      await reader.read();
      third = { end: () => reader.cancel() };
      return true;
    });
    // a dies holding both places; b admits again only once a's lease ran out.
    await kill(a);
    const killedAt = performance.now();
    await Promise.all([held[0].end(), third!.end()].map((p) => p.catch(() => {})));
    const kv = await Deno.openKv(env.GATEWAY_KV);
    try {
      const shares = Object.values(
        (await kv.get<Record<string, { inflight: number }>>(["holds", "key", id])).value!,
      );
      assert.deepEqual(
        shares.map((share) => share.inflight),
        [2],
        "what the dead gateway held is still in the store",
      );
    } finally {
      kv.close();
    }
    await eventually("the dead gateway's lease lapsing", async () => {
      const res = await fetch(`${b.url}${A}`, {
        method: "POST",
        headers: { "Content-Type": "application/json", Authorization: `Bearer ${key}` },
        body: JSON.stringify({ model: "x", messages: USER_HELLO, max_tokens: 3 }),
      });
      await res.body?.cancel();
      return res.status === 200;
    });
    console.log(
      `a dead gateway's places came back ${Math.round(performance.now() - killedAt)} ms after it died`,
    );
  });
});
