import assert from "node:assert/strict";
import { ConcurrencyLimited, QuotaExceeded, StoreUnavailable } from "../errors.ts";
import type { UserRecord } from "../store/records.ts";
import { readTotals, UsageLedger } from "../usage/mod.ts";
import { storeTest } from "../../tests/support/usage_ledger.ts";
import { billFully, key, NOW, Process } from "../../tests/support/reservation_processes.ts";
import { holdingsKey } from "./holdings.ts";
import { limitsOf } from "./quotas.ts";
import { Reservations } from "./reservations.ts";
import { counted as countedCalls } from "../../tests/support/counted_store.ts";

storeTest("40 requests at once on two processes never reserve more than a daily cap of 100", async (kv) => {
  const [a, b] = [new Process(kv), new Process(kv)];
  const k = key("key_a", { dailyTokens: 100 });
  for (let wave = 0; wave < 4; wave++) {
    const outcomes = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).ask(k, 8, 10 + wave * 7)),
    );
    outcomes.forEach((o, i) => billFully(i % 2 ? a : b, k, 8)(o));
    for (const o of outcomes) {
      if (o.status === "rejected") assert.ok(o.reason instanceof QuotaExceeded, String(o.reason));
    }
  }
  await Promise.all([a.close(), b.close()]);
  const { day } = await readTotals(kv, "key", k.id, new Date(NOW));
  assert.ok(day <= 100 && day > 80, `billed ${day} of 100`);
  assert.equal((await kv.get(holdingsKey("key", k.id))).value, null, "closing took every share away");
});

storeTest("a user's cap holds over two keys on two processes", async (kv) => {
  const [a, b] = [new Process(kv), new Process(kv)];
  const ana: UserRecord = { name: "ana", dailyTokens: 100, createdAt: "", updatedAt: "" };
  const keys = [key("key_1", { user: "ana" }), key("key_2", { user: "ana" })];
  const outcomes = await Promise.allSettled(
    Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).ask(keys[i % 2], 8, undefined, ana)),
  );
  const granted = outcomes.filter((o) => o.status === "fulfilled").map((o) => o.value);
  assert.equal(granted.length, 1, "the first reserves all that is left: 8 of prompt and 92 of output");
  assert.equal(granted[0].output, 92);
  outcomes.forEach((o, i) => billFully(i % 2 ? a : b, keys[i % 2], 8, "ana")(o));
  await Promise.all([a.close(), b.close()]);
  assert.equal((await readTotals(kv, "user", "ana", new Date(NOW))).day, 100);
});

storeTest(
  "max-concurrent 2 counts across processes, and a place comes back when a request ends",
  async (kv) => {
    const [a, b] = [new Process(kv), new Process(kv)];
    const k = key("key_c", { maxConcurrent: 2 });
    const first = await a.ask(k, 0);
    const second = await b.ask(k, 0);
    await assert.rejects(a.ask(k, 0), ConcurrencyLimited);
    await assert.rejects(b.ask(k, 0), (e: ConcurrencyLimited) => e.headers()["Retry-After"] === "1");
    a.end(first, k, 0);
    // The same process knows at once; the other once the place is published.
    const third = await a.ask(k, 0);
    await assert.rejects(b.ask(k, 0), ConcurrencyLimited);
    b.end(second, k, 0);
    await b.reservations.idle();
    const fourth = await a.ask(k, 0);
    a.end(third, k, 0);
    a.end(fourth, k, 0);
    await Promise.all([a.close(), b.close()]);
  },
);

storeTest("a process that died holds nothing once its lease ran out", async (kv) => {
  const alive = new Process(kv, 1_000);
  const k = key("key_d", { maxConcurrent: 1, dailyTokens: 100 });
  // What a process leaves behind when it dies between reserving and settling.
  const ghost = { until: alive.wall + 1_000, inflight: 1, tokens: { "d:2026-11-22": 50 } };
  await kv.set(holdingsKey("key", k.id), { ghost });
  await assert.rejects(alive.ask(k, 8), ConcurrencyLimited);
  alive.wall += 1_001;
  const hold = await alive.ask(k, 8);
  assert.equal(hold.output, 92, "the dead process's reservation no longer counts");
  const shares = (await kv.get<Record<string, unknown>>(holdingsKey("key", k.id))).value!;
  assert.deepEqual(Object.keys(shares).length, 1, "the lapsed share was dropped by the next writer");
  assert.equal(shares.ghost, undefined);
  alive.end(hold, k, 20);
  await alive.close();
});

storeTest(
  "a settled request gives back what it did not bill: at once here, after the ledger elsewhere",
  async (kv) => {
    const [a, b] = [new Process(kv), new Process(kv)];
    const k = key("key_s", { dailyTokens: 100 });
    const hold = await a.ask(k, 10, 50);
    assert.equal(hold.output, 50);
    assert.equal((await b.ask(k, 10)).output, 30, "60 reserved elsewhere");
    a.end(hold, k, 20);
    assert.equal((await a.ask(k, 10)).output, 100 - 20 - 40 - 10, "billed 20; the other holds 40");
    await a.reservations.idle();
    const totals = await readTotals(kv, "key", k.id, new Date(NOW));
    assert.equal(totals.day, 20, "the ledger wrote the billed tokens before the share let go of them");
    await Promise.all([a.close(), b.close()]);
  },
);

storeTest(
  "refusals name the cap: used up until it resets, or held by requests in progress for now",
  async (kv) => {
    const p = new Process(kv);
    const k = key("key_r", { dailyTokens: 100, monthlyTokens: 1000 });
    const hold = await p.ask(k, 10, 80);
    const busy = await p.ask(k, 10).then(() => undefined, (e) => e);
    assert.ok(busy instanceof QuotaExceeded);
    assert.match(
      busy.message,
      /Daily token quota of this API key has 10 of 100 tokens left \(requests in progress/,
    );
    assert.equal(busy.headers()["Retry-After"], "1", "a request in progress may give some back");
    assert.equal(busy.headers()["x-should-retry"], undefined, "so a client's retry may succeed");
    p.end(hold, k, 100);
    await p.reservations.idle();
    const spent = await p.ask(k, 10).then(() => undefined, (e) => e);
    assert.match(spent.message, /Daily token quota of this API key is used up \(100 of 100 tokens\)/);
    assert.equal(spent.headers()["Retry-After"], String(12 * 3600));
    assert.equal(spent.headers()["x-should-retry"], "false", "nothing but the reset helps");
    await p.close();
  },
);

/** The store with its round trips counted: reads (`get`, `getMany`) and commits. */
function counted(kv: Deno.Kv): { kv: Deno.Kv; trips: () => number } {
  let trips = 0;
  const proxy = countedCalls(kv, (call) => {
    if (call === "get" || call === "getMany" || call === "commit") trips++;
  });
  return { kv: proxy, trips: () => trips };
}

storeTest(
  "far from a cap's end a process admits from its allowance, which the other process counts as held",
  async (raw) => {
    const store = counted(raw);
    const [a, b] = [new Process(store.kv), new Process(raw)];
    const k = key("key_big", { dailyTokens: 1_000_000 });
    const first = await a.ask(k, 10, 100);
    const share =
      (await raw.get<Record<string, { tokens: Record<string, number> }>>(holdingsKey("key", k.id)))
        .value!;
    const shown = Object.values(share)[0].tokens["d:2026-11-22"];
    assert.ok(shown > 10 * 110, `the share shows an allowance beyond the request's 110 tokens: ${shown}`);
    const other = await b.ask(k, 10, 2_000_000);
    assert.equal(other.output, 1_000_000 - shown - 10, "the other counts all of it");
    other.settle(0);

    const before = store.trips();
    for (let i = 0; i < 1000; i++) {
      const hold = await a.ask(k, 10, 100);
      assert.equal(hold.output, 100);
      hold.settle(0);
    }
    assert.equal(store.trips() - before, 0, "1,000 requests decided in memory");
    first.settle(0);
    await Promise.all([a.close(), b.close()]);
    assert.equal((await raw.get(holdingsKey("key", k.id))).value, null, "closing gave the allowance back");
  },
);

Deno.test("a store that fails answers 503, and takes nothing", async () => {
  const kv = await Deno.openKv(":memory:");
  const broken = new Proxy(kv, {
    get(target, prop) {
      if (prop === "getMany") return () => Promise.reject(new Error("disk I/O error"));
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  const reservations = new Reservations({ kv: broken, ledger: new UsageLedger(kv), defaultOutput: 16 });
  const k = key("key_f", { maxConcurrent: 1 });
  const ask = { limits: limitsOf(k, undefined, NOW), now: NOW, prompt: 0 };
  await assert.rejects(Promise.resolve(reservations.reserve(k.id, ask)), StoreUnavailable);
  await reservations.close();
  assert.equal((await kv.get(holdingsKey("key", k.id))).value, null);
  kv.close();
});
