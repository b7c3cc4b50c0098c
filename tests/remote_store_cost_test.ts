/**
 * What a request costs in store round trips when the store is across a network (a gateway process on a KV
 * Connect store): once its key is known, a key without limits makes none before its answer, a key with an rpm
 * limit, token quotas or both at most one; and requests that arrive together with a key not known yet share
 * one read of it.
 *
 * Telling a request's round trips from the background's. The test server logs every read and write with the
 * keys it touched. A request's own round trips are those made between sending it and its answer, less what
 * the gateway does there on its own: the ledger's group commits (a write of `["usage", ...]` rows, and its
 * reads of `["tokens", ...]` counters it has not written itself) and the reads of the store's generation
 * that keep the views current (`["meta", ...]`). Requests are sent one at a time, so no other request's round
 * trips fall in between.
 */
import assert from "node:assert/strict";
import { FakeOllama } from "./fakes/fake_ollama.ts";
import { type KvConnectServer, startKvConnect } from "./support/kv_connect/mod.ts";
import type { LoggedRequest } from "./support/kv_connect/request_log.ts";
import { admin, type GatewayProcess, startGateway } from "./support/processes.ts";
import { clearOfMinuteEnd, eventually } from "./support/wait_for.ts";

const TOKEN = "kv-connect-test-token";
/** The gateway itself (not through `deno task`), as an operator's service manager runs it. */
const RUN = ["run", "--allow-net", "--allow-env", "--allow-read", "--allow-write", "main.ts"];

/** What the gateway writes and reads of its own accord, whatever requests it serves. */
export function background(r: LoggedRequest): string | undefined {
  const firsts = (keys: Deno.KvKey[]) => keys.map((k) => k[0]);
  if (r.operation === "atomic_write" && firsts(r.writes).includes("usage")) return "ledger batch";
  if (r.operation === "snapshot_read" && firsts(r.reads).every((p) => p === "tokens")) {
    return "ledger counters";
  }
  if (r.operation === "snapshot_read" && firsts(r.reads).every((p) => p === "meta")) return "generation";
  if (r.operation === "snapshot_read" && firsts(r.reads).every((p) => VIEWS.has(p))) return "views";
  return undefined;
}

/** The records the views read whole when the store's generation moves. */
const VIEWS = new Set<unknown>(["servers", "clusters", "users"]);

/**
 * Resolves once the gateway has reloaded its views after the last admin change in the store: it read them
 * again, and polled the generation after that, which it does only once a reload is over.
 */
async function viewsCurrent(store: KvConnectServer): Promise<void> {
  const bumped = store.log().findLastIndex((r) => r.writes.some((k) => k[0] === "meta"));
  await eventually("the views reloaded after the last admin change", () => {
    const since = store.log(bumped + 1);
    const reloaded = since.findIndex((r) => r.reads.some((k) => k[0] === "users"));
    return reloaded >= 0 && since.slice(reloaded + 1).some((r) => r.reads.some((k) => k[0] === "meta"));
  });
}

async function chat(url: string, secret: string): Promise<number> {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${secret}` },
    body: JSON.stringify({ model: "m1", messages: [{ role: "user", content: "hi" }] }),
  });
  await res.body?.cancel();
  return res.status;
}

/** The store round trips of one request, sent alone; background work excepted. */
async function roundTrips(store: KvConnectServer, url: string, secret: string): Promise<LoggedRequest[]> {
  const from = store.logLength();
  assert.equal(await chat(url, secret), 200);
  return store.log(from).filter((r) => background(r) === undefined);
}

const describe = (r: LoggedRequest) =>
  `${r.operation} ${JSON.stringify([...r.reads, ...r.checks, ...r.writes].map((k) => k.map(String)))}`;

async function withGateway(
  fn: (
    ctx: { store: KvConnectServer; gateway: GatewayProcess; env: Record<string, string> },
  ) => Promise<void>,
) {
  const dir = await Deno.makeTempDir();
  const store = await startKvConnect({ path: `${dir}/store.kv`, token: TOKEN, latencyMs: 2 });
  const fake = FakeOllama.start("cost");
  // A long lease, so no renewal of the holdings falls among the requests counted.
  const env = { GATEWAY_KV: store.url, DENO_KV_ACCESS_TOKEN: TOKEN, GATEWAY_HOLD_LEASE_MS: "600000" };
  let gateway: GatewayProcess | undefined;
  try {
    await admin(env, "server", "add", "--name", "gpu1", "--url", fake.url, "--model", "m1");
    gateway = await startGateway(env, RUN);
    await fn({ store, gateway, env });
  } finally {
    const status = await gateway?.stop();
    await fake.close();
    await store.close();
    await Deno.remove(dir, { recursive: true });
    if (status) assert.equal(status.code, 0, "clean exit");
  }
}

Deno.test("on a KV Connect store, once its key is known a request makes no store round trip without limits and at most one with an rpm limit, quotas or both", async () => {
  await withGateway(async ({ store, gateway, env }) => {
    const keys = {
      "no limits": await admin(env, "key", "create", "--model", "m1"),
      // Under 100 a claim takes no headroom: every request claims its own slot, the dearest case.
      "rpm 60": await admin(env, "key", "create", "--model", "m1", "--rpm", "60"),
      "daily quota": await admin(env, "key", "create", "--model", "m1", "--daily-tokens", "1000000000"),
      "rpm 60 and a daily quota": await admin(
        env,
        "key",
        "create",
        "--model",
        "m1",
        "--rpm",
        "60",
        "--daily-tokens",
        "1000000000",
      ),
    };
    await viewsCurrent(store);
    await clearOfMinuteEnd(15_000);
    const seen: Record<string, number[]> = {};
    for (const [name, key] of Object.entries(keys)) {
      // The first request reads the key and, for a quota, claims this process's allowance of it.
      assert.equal(await chat(gateway.url, key.key), 200);
      seen[name] = [];
      for (let i = 0; i < 8; i++) {
        const made = await roundTrips(store, gateway.url, key.key);
        seen[name].push(made.length);
        assert.ok(
          made.length <= (name === "no limits" ? 0 : 1),
          `${name}: request ${i} made ${made.length} round trip(s): ${made.map(describe).join("; ")}`,
        );
      }
    }
    // The rpm key's requests each claimed their slot, in one round trip each.
    assert.deepEqual(seen["rpm 60"], Array(8).fill(1));

    // An admin change reloads the views, known keys with them: the next request still reads nothing.
    await admin(env, "key", "create", "--model", "m1");
    await viewsCurrent(store);
    const made = await roundTrips(store, gateway.url, keys["no limits"].key);
    assert.deepEqual(made.map(describe), [], "after an admin change");
  });
});

Deno.test("on a KV Connect store, 40 requests that arrive together with a key not read yet read it once", async () => {
  await withGateway(async ({ store, gateway, env }) => {
    const { key } = await admin(env, "key", "create", "--model", "m1");
    // Not during the reload the new key's creation causes, which reads the known keys again.
    await viewsCurrent(store);
    const from = store.logLength();
    const statuses = await Promise.all(Array.from({ length: 40 }, () => chat(gateway.url, key)));
    assert.deepEqual(statuses, Array(40).fill(200));
    const lookups = store.log(from).filter((r) => r.reads.some((k) => k[0] === "keys_by_digest"));
    assert.equal(lookups.length, 1, `${lookups.length} reads of the key`);
  });
});
