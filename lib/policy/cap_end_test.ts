/**
 * @module Reservations at and far from a cap's end, over processes sharing a store: an allowance holds the cap
 * exactly through its end, one no request took from is given back, and a settled request's record is written
 * at once only where other processes decide against its share.
 */
import assert from "node:assert/strict";
import { QuotaExceeded } from "../errors.ts";
import { readTotals } from "../usage/mod.ts";
import { storeTest } from "../../tests/support/usage_ledger.ts";
import { billFully, key, NOW, Process } from "../../tests/support/reservation_processes.ts";
import { holdingsKey } from "./holdings.ts";

storeTest("an allowance holds a cap exactly through its end, over two processes", async (kv) => {
  const [a, b] = [new Process(kv), new Process(kv)];
  // 110 tokens a request: allowances of 1,250 at first, none once the headroom is under 14,080 per process.
  const k = key("key_end", { dailyTokens: 20_000 });
  let served = 0;
  for (let wave = 0; wave < 400; wave++) {
    const outcomes = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) => (i % 2 ? a : b).ask(k, 10, 100)),
    );
    outcomes.forEach((o, i) => billFully(i % 2 ? a : b, k, 10)(o));
    for (const o of outcomes) {
      if (o.status === "rejected") assert.ok(o.reason instanceof QuotaExceeded, String(o.reason));
    }
    const granted = outcomes.filter((o) => o.status === "fulfilled").length;
    served += granted;
    // What the requests billed reaches the counters, and the shares stop showing it.
    await Promise.all([a.reservations.idle(), b.reservations.idle()]);
    if (granted === 0) break;
  }
  await Promise.all([a.close(), b.close()]);
  const { day } = await readTotals(kv, "key", k.id, new Date(NOW));
  assert.ok(day <= 20_000, `billed ${day} of 20,000 over ${served} requests`);
  assert.ok(day > 20_000 - 110, `billed ${day}: nothing held back at the end`);
});

storeTest(
  "a cap holds exactly while requests end, the ledger writes and decisions read all at once, over two processes",
  async (kv) => {
    const [a, b] = [new Process(kv), new Process(kv)];
    const k = key("key_overlap", { dailyTokens: 20_000 });
    // Eight clients per process, each asking again as soon as its last request ended: billed entries are written
    // and forgotten while other requests' decisions read the store, which must still count what they need.
    const client = async (p: Process) => {
      for (;;) {
        let hold;
        try {
          hold = await p.ask(k, 10, 100);
        } catch (error) {
          assert.ok(error instanceof QuotaExceeded, String(error));
          return;
        }
        p.end(hold, k, 10 + hold.output!);
        await new Promise((resolve) => setTimeout(resolve, 0));
      }
    };
    await Promise.all(Array.from({ length: 16 }, (_, i) => client(i % 2 ? a : b)));
    // A refusal was right when it came (others held the rest); once they settled, what is left is served.
    await Promise.all([a.reservations.idle(), b.reservations.idle()]);
    await client(a);
    await Promise.all([a.close(), b.close()]);
    const { day } = await readTotals(kv, "key", k.id, new Date(NOW));
    assert.ok(day <= 20_000, `billed ${day} of 20,000`);
    assert.ok(day > 20_000 - 110, `billed ${day}: nothing held back at the end`);
  },
);

storeTest("an allowance no request took from is given back at the next renewal", async (kv) => {
  const p = new Process(kv, 300);
  const k = key("key_idle", { dailyTokens: 1_000_000 });
  p.end(await p.ask(k, 10, 100), k, 20);
  const shown = async () => {
    const share = (await kv.get<Record<string, { tokens: Record<string, number> }>>(holdingsKey("key", k.id)))
      .value;
    return share ? Object.values(share)[0]?.tokens["d:2026-11-22"] ?? 0 : 0;
  };
  assert.ok(await shown() > 1000);
  const start = performance.now();
  while (await shown() > 0) {
    assert.ok(performance.now() - start < 10_000, "given back within 10 s");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await p.close();
  assert.equal((await readTotals(kv, "key", k.id, new Date(NOW))).day, 20);
});

storeTest(
  "a settled request's record is written at once near a cap's end, in the ledger's own time far from it",
  async (kv) => {
    // A ledger that would wait a minute before writing a batch on its own.
    const p = new Process(kv, 30_000, 60_000);
    const settledWithin = async (id: string, ms: number) => {
      const until = Date.now() + ms;
      while (Date.now() < until) {
        if ((await readTotals(kv, "key", id, new Date(NOW))).day > 0) return true;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      return false;
    };
    // Keeps the test's process alive while the ledger's timers, which do not, are the only ones left.
    const alive = setTimeout(() => {}, 10_000);
    try {
      // Far from its cap the key is admitted from an allowance, and its record waits for the batch.
      const far = key("key_far", { dailyTokens: 1_000_000_000 });
      p.end(await p.ask(far, 10, 50), far, 60);
      assert.equal(await settledWithin(far.id, 300), false);
      // Near its cap every request is decided with the store: its record is written at once, so that the
      // reservation its share shows to other processes becomes the tokens it billed.
      const near = key("key_near", { dailyTokens: 100 });
      p.end(await p.ask(near, 10, 50), near, 60);
      assert.equal(await settledWithin(near.id, 2_000), true);
    } finally {
      clearTimeout(alive);
      await p.close();
    }
  },
);
