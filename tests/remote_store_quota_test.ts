/**
 * A daily token quota shared by two gateway processes on one KV Connect store, at 20 ms a round trip, hit by
 * concurrent streams over every client path: the bill stays within the bound one process keeps on its own, the
 * quota plus one prompt estimate (the most a backend's count of a prompt may exceed the gateway's estimate by,
 * here), for a key's quota and for a user's over two keys.
 */
import assert from "node:assert/strict";
import { FakeOllama } from "./fakes/fake_ollama.ts";
import { startKvConnect } from "./support/kv_connect/mod.ts";
import { assertLedgerConsistent, readLedger } from "./support/ledger_check.ts";
import { admin, type GatewayProcess, startGateway } from "./support/processes.ts";
import { assertServedOrRefused, billedOf, burst, LONG_ANSWER, PROMPT } from "./support/quota_streams.ts";

const TOKEN = "kv-connect-test-token";
const RUN = ["run", "--allow-net", "--allow-env", "--allow-read", "--allow-write", "main.ts"];

Deno.test("two gateways on a KV Connect store at 20 ms: 20 streams at once on a key's and on a user's daily quota of 100 bill at most it and one prompt estimate", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/store.kv`;
  const store = await startKvConnect({ path, token: TOKEN, latencyMs: 20 });
  const fake = FakeOllama.start("quota");
  fake.reply = LONG_ANSWER;
  const env = { GATEWAY_KV: store.url, DENO_KV_ACCESS_TOKEN: TOKEN };
  const gateways: GatewayProcess[] = [];
  try {
    await admin(env, "server", "add", "--name", "gpu1", "--url", fake.url, "--model", "m1");
    const key = await admin(env, "key", "create", "--model", "m1", "--daily-tokens", "100");
    await admin(env, "user", "add", "--name", "ana", "--daily-tokens", "100");
    const ofAna = [
      await admin(env, "key", "create", "--model", "m1", "--user", "ana"),
      await admin(env, "key", "create", "--model", "m1", "--user", "ana"),
    ];
    gateways.push(...await Promise.all([startGateway(env, RUN), startGateway(env, RUN)]));
    const urls = gateways.map((g) => g.url);
    assertServedOrRefused(await burst(urls, [key.key], 20));
    assertServedOrRefused(await burst(urls, ofAna.map((k) => k.key), 20));
    assert.deepEqual((await Promise.all(gateways.map((g) => g.stop()))).map((s) => s.code), [0, 0]);
    await store.close();

    const ledger = await readLedger(path);
    assertLedgerConsistent(ledger);
    const records = [...ledger.records.values()];
    const keyBilled = billedOf(records.filter((r) => r.keyId === key.id));
    const userBilled = billedOf(records.filter((r) => r.user === "ana"));
    assert.ok(keyBilled <= 100 + PROMPT, `key billed ${keyBilled}`);
    assert.ok(userBilled <= 100 + PROMPT, `user billed ${userBilled}`);
    console.log(`billed: key ${keyBilled}, user ${userBilled}; bound ${100 + PROMPT}`);
  } finally {
    await Promise.all(gateways.map((g) => g.stop()));
    await fake.close();
    await store.close().catch(() => {});
    await Deno.remove(dir, { recursive: true });
  }
});
