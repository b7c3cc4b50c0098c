/**
 * kill -9 of one of two gateway processes under load on one KV Connect store, then a stop of a gateway while
 * the store is down. Records and counters are written in one commit, so whatever a killed gateway had not
 * written is missing from both: the counters of every key and user still equal the sums of their records, the
 * surviving gateway's key has exactly the records of the requests it answered, and the killed one's no more
 * than it answered. A gateway told to stop while the store is down does not wait for it forever: it gives up
 * on the records the store does not take, says how many, and exits 1.
 */
import assert from "node:assert/strict";
import { FakeOllama } from "./fakes/fake_ollama.ts";
import { startKvConnect } from "./support/kv_connect/mod.ts";
import { assertLedgerConsistent, readLedger, recordsOf } from "./support/ledger_check.ts";
import { count, runLoops, sendOne, type Sent } from "./support/load_loops.ts";
import { admin, type GatewayProcess, startGateway } from "./support/processes.ts";
import { eventually } from "./support/wait_for.ts";
import { listUsage } from "../lib/usage/mod.ts";

const TOKEN = "kv-connect-test-token";
/** The gateway itself, not `deno task`: SIGKILL cannot be passed on, and would leave the gateway running. */
const RUN = ["run", "--allow-net", "--allow-env", "--allow-read", "--allow-write", "main.ts"];
const LOOPS = 4;
const PER_LOOP = 2_000;

Deno.test("kill -9 of one of two gateways under load on a KV Connect store: counters equal the sums of the records", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/store.kv`;
  const store = await startKvConnect({ path, token: TOKEN, latencyMs: 5 });
  const fake = FakeOllama.start("kill");
  fake.chunkDelayMs = 2;
  const env = { GATEWAY_KV: store.url, DENO_KV_ACCESS_TOKEN: TOKEN };
  const gateways: GatewayProcess[] = [];
  try {
    await admin(env, "server", "add", "--name", "gpu1", "--url", fake.url, "--model", "m1");
    await admin(env, "user", "add", "--name", "team", "--daily-tokens", "1000000000");
    // One key per gateway, one user over both: its counters are written by both processes.
    const killedKey = await admin(env, "key", "create", "--model", "m1", "--user", "team");
    const keptKey = await admin(env, "key", "create", "--model", "m1", "--user", "team");
    gateways.push(...await Promise.all([startGateway(env, RUN), startGateway(env, RUN)]));
    const [doomed, kept] = gateways;

    const killed: Sent[] = [];
    const survived: Sent[] = [];
    const doomedLoad = runLoops({
      url: doomed.url,
      keys: Array(LOOPS).fill(killedKey.key),
      perLoop: PER_LOOP,
      results: killed,
    });
    const keptLoad = runLoops({
      url: kept.url,
      keys: Array(LOOPS).fill(keptKey.key),
      perLoop: PER_LOOP / 8,
      results: survived,
    });
    // The ledger writes while the load goes on: the kill comes once 200 of the doomed gateway's are stored.
    await eventually(
      "answers from both, and the doomed gateway's records in the store",
      async () =>
        count(survived, keptKey.key, "complete") >= 20 &&
        (await listUsage(store.store, { keyId: killedKey.id, limit: 1_000_000 })).length >= 200,
    );
    doomed.child.kill("SIGKILL");
    assert.equal((await doomed.child.status).signal, "SIGKILL");
    await Promise.all([doomedLoad, keptLoad]);
    assert.ok(count(killed, killedKey.key, "broken") > 0, "the kill came while the load was running");
    assert.equal(count(survived, keptKey.key, "broken"), 0);
    assert.equal((await kept.stop()).code, 0);
    await store.close();

    const ledger = await readLedger(path);
    assertLedgerConsistent(ledger);
    assert.equal(recordsOf(ledger, keptKey.id).length, survived.length, "the surviving gateway's, every one");
    const answered = count(killed, killedKey.key, "complete") + count(killed, killedKey.key, "refused");
    const inFlight = count(killed, killedKey.key, "broken");
    const records = recordsOf(ledger, killedKey.id).length;
    assert.ok(records > 0 && records <= answered + inFlight, `${records} records of ${answered}+${inFlight}`);
    console.log(`killed gateway: ${answered} answered, ${inFlight} in flight, ${records} records kept`);
  } finally {
    for (const g of gateways) if ((await Promise.race([g.child.status, null])) === null) await g.stop();
    await fake.close();
    await store.close().catch(() => {});
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a gateway stopped while its KV Connect store is down gives up on the records left, says how many, and exits 1", async () => {
  const dir = await Deno.makeTempDir();
  const store = await startKvConnect({ path: `${dir}/store.kv`, token: TOKEN, latencyMs: 2 });
  const fake = FakeOllama.start("stop");
  const env = { GATEWAY_KV: store.url, DENO_KV_ACCESS_TOKEN: TOKEN };
  let gateway: GatewayProcess | undefined;
  try {
    await admin(env, "server", "add", "--name", "gpu1", "--url", fake.url, "--model", "m1");
    const { key } = await admin(env, "key", "create", "--model", "m1");
    gateway = await startGateway(env, RUN);
    assert.equal((await sendOne(gateway.url, key, 0)).status, 200);
    await store.setOutage(true);
    const during: Sent[] = [];
    await runLoops({ url: gateway.url, keys: [key, key], perLoop: 5, results: during });
    assert.equal(count(during, key, "complete"), 10, "served from memory");
    const status = await gateway.stop();
    assert.equal(status.code, 1);
    assert.match(gateway.output(), /\d+ usage record\(s\) with \d+ token\(s\) were not written/);
  } finally {
    await gateway?.stop();
    await fake.close();
    await store.close();
    await Deno.remove(dir, { recursive: true });
  }
});
