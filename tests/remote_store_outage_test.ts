/**
 * A store outage under load, with two gateway processes on one KV Connect store: one with
 * `GATEWAY_STORE_OUTAGE=closed` (the default), one with `allow`. While the store refuses every connection the
 * gateways keep serving, and answer as the README says: keys without limits and quotas far from their cap from
 * memory (200), a key whose rpm needs a claim 503 `store_unavailable` in the client's format (closed) or up to
 * GATEWAY_STORE_OUTAGE_RPM requests a minute (allow), a key never seen before 503. /metrics and
 * /admin/status show the store down and the records waiting. Once the store is back every record is written, none twice: the records of
 * each key equal the requests it was answered, and the counters equal their sums.
 *
 * The outage lasts ten seconds (`OUTAGE_MS` changes it): the gateway takes the store for down once an
 * operation has waited GATEWAY_STORE_TIMEOUT_MS (1 s), and from then on requests are answered from memory or
 * refused at once, and the ledger's commit waits in Deno's client, which tries again every 200 ms, until the
 * backlog bound (100,000 records) or the hold lease (30 s), neither of which ten seconds reach.
 */
import assert from "node:assert/strict";
import { FakeOllama } from "./fakes/fake_ollama.ts";
import { startKvConnect } from "./support/kv_connect/mod.ts";
import { assertLedgerConsistent, readLedger, recordsOf } from "./support/ledger_check.ts";
import { sendOne, type Sent } from "./support/load_loops.ts";
import { admin, type GatewayProcess, startGateway } from "./support/processes.ts";
import { clearOfMinuteEnd, eventually } from "./support/wait_for.ts";
import { listUsage } from "../lib/usage/mod.ts";

const TOKEN = "kv-connect-test-token";
const ADMIN = "outage-admin-token";
const RUN = ["run", "--allow-net", "--allow-env", "--allow-read", "--allow-write", "main.ts"];
const OUTAGE_MS = Number(Deno.env.get("OUTAGE_MS") ?? 10_000);
const ALLOWED_PER_MINUTE = 5;
/** Bounds each load loop, whatever happens; the loops are paced so that they run through the whole test. */
const MAX_PER_LOOP = 10_000;
const PACE_MS = 5;

/** The store figures a gateway's /metrics shows. */
async function storeFigures(url: string) {
  const res = await fetch(`${url}/metrics`, { headers: { Authorization: `Bearer ${ADMIN}` } });
  const text = await res.text();
  assert.equal(res.status, 200, text);
  const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, "m").exec(text)?.[1]);
  return {
    up: value("gateway_store_up"),
    roundTripS: value("gateway_store_round_trip_seconds"),
    outages: value("gateway_store_outages_total"),
    backlog: value("gateway_usage_backlog_records"),
  };
}

/** GET /admin/status. */
async function adminStatus(url: string) {
  const res = await fetch(`${url}/admin/status`, { headers: { Authorization: `Bearer ${ADMIN}` } });
  assert.equal(res.status, 200);
  return await res.json();
}

interface Answer {
  status: number;
  code?: string;
  retryAfter: string | null;
  body: string;
}

/** One chat, format A (`/v1/chat/completions`) or B (`/v1/chat.php`), answered whole. */
async function ask(url: string, secret: string, path = "/v1/chat/completions"): Promise<Answer> {
  const res = await fetch(`${url}${path}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${secret}` },
    body: JSON.stringify({ messages: [{ role: "user", content: "hi" }] }),
  });
  const body = await res.text();
  let code: string | undefined;
  try {
    code = JSON.parse(body).error?.code;
  } catch {
    // Not JSON: left for the assertion that reads `body`.
  }
  return { status: res.status, code, retryAfter: res.headers.get("retry-after"), body };
}

Deno.test(`a ${OUTAGE_MS / 1000} s store outage under load: no crash, the documented answers, every record written once the store is back, none twice`, async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/store.kv`;
  const store = await startKvConnect({ path, token: TOKEN, latencyMs: 2 });
  const fake = FakeOllama.start("outage");
  const env = { GATEWAY_KV: store.url, DENO_KV_ACCESS_TOKEN: TOKEN, GATEWAY_ADMIN_TOKEN: ADMIN };
  const gateways: GatewayProcess[] = [];
  let stopLoad = true;
  let loops: Promise<void> | undefined;
  try {
    await admin(env, "server", "add", "--name", "gpu1", "--url", fake.url, "--model", "m1");
    const keys = {
      free: await admin(env, "key", "create", "--model", "m1"),
      quota: await admin(env, "key", "create", "--model", "m1", "--daily-tokens", "1000000000"),
      // Under 100 an rpm claims no headroom: under load, most requests of this key wait for a claim.
      rpm: await admin(env, "key", "create", "--model", "m1", "--rpm", "99"),
      // Used only by the requests below that check what each mode answers.
      probe: await admin(env, "key", "create", "--model", "m1", "--rpm", "50"),
    };
    gateways.push(
      ...await Promise.all([
        startGateway({ ...env, GATEWAY_STORE_OUTAGE: "closed" }, RUN),
        startGateway(
          { ...env, GATEWAY_STORE_OUTAGE: "allow", GATEWAY_STORE_OUTAGE_RPM: String(ALLOWED_PER_MINUTE) },
          RUN,
        ),
      ]),
    );
    const [closed, allow] = gateways.map((g) => g.url);
    const urls = [closed, allow];
    /** Requests each key was answered, whatever the answer; keys by id. */
    const answered = new Map<string, number>();
    const note = (keyId: string) => answered.set(keyId, (answered.get(keyId) ?? 0) + 1);
    for (const url of urls) {
      for (const key of Object.values(keys)) {
        assert.equal((await ask(url, key.key)).status, 200);
        note(key.id);
      }
    }

    // The load: on each gateway, loops of the free, quota and rpm keys, both formats, streamed and not.
    await clearOfMinuteEnd(OUTAGE_MS + 25_000);
    stopLoad = false;
    const results: { url: string; keyId: string; sent: Sent }[] = [];
    const loopKeys = [keys.free, keys.free, keys.quota, keys.rpm];
    loops = Promise.all(urls.flatMap((url) =>
      loopKeys.map(async (key, i) => {
        for (let n = 0; n < MAX_PER_LOOP && !stopLoad; n++) {
          const sent = await sendOne(url, key.key, i + n);
          results.push({ url, keyId: key.id, sent });
          note(key.id);
          await new Promise((resolve) => setTimeout(resolve, PACE_MS));
        }
      })
    )).then(() => {});
    await eventually("answers under load", () => results.length >= 100);

    await store.setOutage(true);
    const outage = { from: Date.now(), to: Infinity };
    const outageStarted = performance.now();
    await eventually("both gateways to take the store for down", async () => {
      const figures = await Promise.all(urls.map(storeFigures));
      return figures.every((f) => f.up === 0 && f.outages === 1);
    });

    const statusDown = await adminStatus(closed);
    assert.deepEqual([statusDown.store.state, statusDown.store.kind, statusDown.usage], [
      "down",
      "network",
      null,
    ]);
    assert.ok(statusDown.store.downSince, "since when");

    // What each kind of key gets while the store is down.
    for (const url of urls) {
      for (const key of [keys.free, keys.quota]) {
        assert.equal((await ask(url, key.key)).status, 200, "served from memory");
        note(key.id);
      }
      const unknown = await ask(url, "sk-gw-never-issued-0000000000000000");
      assert.deepEqual([unknown.status, unknown.code], [503, "store_unavailable"], "a key not in memory");
    }
    const refused = await ask(closed, keys.probe.key);
    note(keys.probe.id);
    assert.deepEqual([refused.status, refused.code, refused.retryAfter], [503, "store_unavailable", "1"]);
    assert.match(refused.body, /cannot check the rate limit/);
    const refusedB = await ask(closed, keys.probe.key, "/v1/chat.php");
    note(keys.probe.id);
    assert.deepEqual([refusedB.status, refusedB.code], [503, "store_unavailable"]);
    assert.equal(JSON.parse(refusedB.body).error.type, "proxy_error", "in format B's own shape");
    const allowed: number[] = [];
    for (let i = 0; i <= ALLOWED_PER_MINUTE; i++) {
      allowed.push((await ask(allow, keys.probe.key)).status);
      note(keys.probe.id);
    }
    assert.deepEqual(allowed, [...Array(ALLOWED_PER_MINUTE).fill(200), 503], "allow: a bounded allowance");
    const during = await Promise.all(urls.map(storeFigures));
    assert.ok(during.every((f) => f.backlog > 0), "records wait for the store");

    const left = OUTAGE_MS - (performance.now() - outageStarted);
    if (left > 0) await new Promise((resolve) => setTimeout(resolve, left));
    outage.to = Date.now();
    await store.setOutage(false);
    await eventually("both gateways to take the store for back", async () => {
      const figures = await Promise.all(urls.map(storeFigures));
      return figures.every((f) => f.up === 1);
    });
    for (const url of urls) {
      assert.equal((await ask(url, keys.probe.key)).status, 200, "the store is back");
      note(keys.probe.id);
    }
    const statusUp = await adminStatus(closed);
    assert.deepEqual([statusUp.store.state, statusUp.store.outages], ["up", 1]);
    assert.equal(typeof statusUp.store.roundTripMs, "number");
    assert.ok(statusUp.usage, "the usage figures are back");
    await new Promise((resolve) => setTimeout(resolve, 500));
    stopLoad = true;
    await loops;
    await eventually("both gateways to write what waited", async () => {
      const figures = await Promise.all(urls.map(storeFigures));
      return figures.every((f) => f.backlog === 0);
    });

    assert.deepEqual(results.filter((r) => r.sent.outcome === "broken"), [], "no connection broke");
    const statuses = (keyId: string) =>
      [...new Set(results.filter((r) => r.keyId === keyId).map((r) => r.sent.status))].sort();
    assert.deepEqual(statuses(keys.free.id), [200]);
    assert.deepEqual(statuses(keys.quota.id), [200]);
    for (const status of statuses(keys.rpm.id)) assert.ok([200, 429, 503].includes(status!), `${status}`);
    const figures = await Promise.all(urls.map(storeFigures));
    assert.ok(figures.every((f) => f.roundTripS >= 0 && f.roundTripS < 1), "a round trip is shown");
    const within = results.filter((r) => r.sent.sentAt >= outage.from && r.sent.endedAt <= outage.to);
    const servedWithin = within.filter((r) => r.keyId === keys.free.id && r.sent.status === 200).length;
    assert.ok(servedWithin > 0, "the load's keys without limits were served during the outage");

    // Once written after the outage, each key's records are exactly the requests it was answered.
    await eventually("every record in the store", async () => {
      for (const [keyId, n] of answered) {
        if ((await listUsage(store.store, { keyId, limit: 1_000_000 })).length !== n) return false;
      }
      return true;
    });
    const statuses2 = await Promise.all(gateways.map((g) => g.stop()));
    assert.deepEqual(statuses2.map((s) => s.code), [0, 0], "clean exits");
    await store.close();
    const ledger = await readLedger(path);
    assertLedgerConsistent(ledger);
    for (const [keyId, n] of answered) {
      assert.equal(recordsOf(ledger, keyId).length, n, `records of ${keyId}`);
    }
    console.log(
      `answered during the test: ${JSON.stringify(Object.fromEntries(answered))}; ` +
        `load requests within the outage: ${within.length}, of the free key served: ${servedWithin}; ` +
        `load statuses: ${
          JSON.stringify(Object.fromEntries(Object.values(keys).map((k) => [k.id, statuses(k.id)])))
        }`,
    );
  } finally {
    stopLoad = true;
    await loops;
    await Promise.all(gateways.map((g) => g.stop()));
    await fake.close();
    await store.close().catch(() => {});
    await Deno.remove(dir, { recursive: true });
  }
});
