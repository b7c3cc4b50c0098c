/**
 * A gateway process killed with SIGKILL under concurrent load, then started again on the same store file:
 * the store opens and serves, records and counters still agree exactly (they are written in one commit),
 * nothing is counted twice, at most the requests in flight or not yet flushed at the kill are missing, and
 * the per-minute rate limit still holds across the restart.
 */
import assert from "node:assert/strict";
import { FakeOllama } from "./fakes/fake_ollama.ts";
import { admin, chat, type GatewayProcess, startGateway } from "./support/processes.ts";
import { killChild, waitFor } from "./support/chat_streams.ts";
import { assertLedgerConsistent, readLedger, recordsOf } from "./support/ledger_check.ts";
import { count, minuteOf, runLoops, sendOne, type Sent } from "./support/load_loops.ts";
import { eventually } from "./support/wait_for.ts";
import { listUsage } from "../lib/usage/mod.ts";

/** The gateway itself, not `deno task`: SIGKILL cannot be passed on, and would leave the gateway running. */
const GATEWAY = ["run", "--allow-net", "--allow-env", "--allow-read", "--allow-write", "main.ts"];
const RPM = 10;
const LOAD_LOOPS = 6;
const PER_LOOP = 60;
const SETTLED = 40;

/** Records of `keyId` in the store so far, read while the gateway runs (SQLite allows other readers). */
async function recordsNow(store: string, keyId: string): Promise<number> {
  const kv = await Deno.openKv(store);
  try {
    return (await listUsage(kv, { keyId, limit: 1_000_000 })).length;
  } finally {
    kv.close();
  }
}

/**
 * Waits, if needed, for a minute with room for the kill and the restart, so both fall in one rate window: 30 s
 * at least, for what takes a few seconds.
 */
async function startOfRoomyMinute(): Promise<void> {
  const intoMinute = Date.now() % 60_000;
  if (intoMinute > 30_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - intoMinute + 50));
}

Deno.test("kill -9 under load: the store reopens, counters equal the records, nothing doubles, limits hold", async () => {
  const dir = await Deno.makeTempDir();
  const store = `${dir}/store.kv`;
  const env = { GATEWAY_KV: store };
  const fake = FakeOllama.start("d");
  fake.chunkDelayMs = 5;
  const running: GatewayProcess[] = [];
  try {
    await admin(env, "server", "add", "--name", "gpu1", "--url", fake.url, "--model", "m1");
    await admin(env, "user", "add", "--name", "team");
    const load = await admin(env, "key", "create", "--model", "m1", "--user", "team");
    const rated = await admin(env, "key", "create", "--model", "m1", "--user", "team", "--rpm", String(RPM));
    const later = await admin(env, "key", "create", "--model", "m1");
    const first = await startGateway(env, GATEWAY);
    running.push(first);

    // Answers completed well before the kill must survive it: wait until the ledger has written them.
    const settled: Sent[] = [];
    await runLoops({ url: first.url, keys: Array(4).fill(load.key), perLoop: SETTLED / 4, results: settled });
    assert.equal(count(settled, load.key, "complete"), SETTLED);
    await eventually(
      "the ledger to write the settled answers",
      async () => await recordsNow(store, load.id) >= SETTLED,
    );
    assert.equal(await recordsNow(store, load.id), SETTLED);

    await startOfRoomyMinute();
    const results: Sent[] = [];
    const loops = runLoops({
      url: first.url,
      keys: [...Array(LOAD_LOOPS).fill(load.key), rated.key],
      perLoop: PER_LOOP,
      results,
    });
    await waitFor(
      "100 answers under load and the rated key at its limit",
      () => count(results, load.key, "complete") >= 100 && count(results, rated.key, "refused") > 0,
    );
    // The ledger writes while the load goes on, not only when idle: half of those answers are in the store
    // before the kill. Whatever the store holds at the kill must be there after the restart.
    let loadOver = false;
    loops.then(() => loadOver = true);
    const storedAtKill = await eventually(
      "the ledger to write the load's answers while it runs",
      async () => {
        const n = await recordsNow(store, load.id);
        if (n >= SETTLED + 50) return n;
        assert.ok(!loadOver, `the load ended with ${n - SETTLED} of its answers in the store`);
        return false;
      },
    );
    first.child.kill("SIGKILL");
    assert.equal((await first.child.status).signal, "SIGKILL");
    await loops;
    assert.ok(count(results, load.key, "broken") > 0, "the kill came while the load was running");

    const second = await startGateway(env, GATEWAY);
    running.push(second);
    assert.equal(await chat(second.url, later.key), 200, "the restarted gateway serves");
    const after: Sent[] = [];
    for (let i = 0; i < RPM; i++) after.push(await sendOne(second.url, rated.key, 0));
    assert.equal((await second.stop()).code, 0);

    const ledger = await readLedger(store);
    assertLedgerConsistent(ledger);

    const loadRecords = recordsOf(ledger, load.id);
    const completed = SETTLED + count(results, load.key, "complete");
    const inFlight = count(results, load.key, "broken");
    assert.ok(inFlight <= LOAD_LOOPS, "each loop had at most one request in flight");
    assert.ok(
      loadRecords.length >= storedAtKill,
      `${storedAtKill} records were in the store before the kill, ${loadRecords.length} after the restart`,
    );
    assert.ok(
      loadRecords.length <= completed + inFlight,
      `${loadRecords.length} records for ${completed} answers and ${inFlight} in flight`,
    );
    assert.ok(loadRecords.every((r) => r.status === "ok" || r.status === "partial"), "no request failed");

    // Every minute, the rated key was admitted at most RPM times: by the records, and by the answers the
    // clients saw, before and after the restart together.
    const ratedSent = [...results, ...after].filter((s) => s.key === rated.key);
    const admittedRecords = recordsOf(ledger, rated.id).filter((r) => r.status !== "rejected");
    const minutes = new Set([
      ...admittedRecords.map((r) => Math.floor(Date.parse(r.time) / 60_000)),
      ...ratedSent.flatMap((s) => s.status === 200 ? minuteOf(s) ?? [] : []),
    ]);
    assert.ok(minutes.size > 0);
    for (const minute of minutes) {
      const seen = ratedSent.filter((s) => s.status === 200 && minuteOf(s) === minute).length;
      assert.ok(seen <= RPM, `${seen} answers in minute ${minute}`);
      const recorded = admittedRecords.filter((r) =>
        Math.floor(Date.parse(r.time) / 60_000) === minute
      ).length;
      assert.ok(recorded <= RPM, `${recorded} admitted records in minute ${minute}`);
    }
    // The minute the limit was spent in, before the kill: the restart falls in it (startOfRoomyMinute), so the
    // restarted gateway must still refuse the key. A restart that took the rest of the minute fails here rather
    // than leaving the limit unchecked.
    const exhausted = results.find((s) => s.key === rated.key && s.status === 429);
    assert.ok(exhausted, "the rated key was refused before the kill");
    const minute = minuteOf(exhausted);
    assert.notEqual(minute, undefined);
    assert.deepEqual(
      after.map(minuteOf),
      Array(RPM).fill(minute),
      `the requests after the restart fell in the minute the limit was spent in (they ended ${
        after.at(-1)!.endedAt - exhausted.sentAt
      } ms after it was)`,
    );
    assert.deepEqual(after.map((s) => s.status), Array(RPM).fill(429), "a restart does not renew the limit");
  } finally {
    await Promise.all(running.map((g) => killChild(g.child)));
    await fake.close();
    await Deno.remove(dir, { recursive: true });
  }
});
