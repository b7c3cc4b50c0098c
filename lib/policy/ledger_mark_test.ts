/**
 * The ledger's mark: a quota decision counts this process's billed tokens once, whether or not the news that
 * their records were written has reached the reservations yet.
 */
import assert from "node:assert/strict";
import { basePolicy, type KeyRecord } from "../store/records.ts";
import { type LedgerProgress, readTotals, UsageLedger } from "../usage/mod.ts";
import { sample, storeTest } from "../../tests/support/usage_ledger.ts";
import { limitsOf } from "./quotas.ts";
import { Reservations } from "./reservations.ts";

const NOW = Date.parse("2026-11-22T12:00:00Z");

function key(id: string, policy: Partial<KeyRecord> = {}): KeyRecord {
  const at = new Date(NOW).toISOString();
  return { ...basePolicy("m1"), id, digest: id, hint: "gwk_", createdAt: at, updatedAt: at, ...policy };
}

storeTest("a record whose commit landed counts once while the news of it is still on its way", async (kv) => {
  const ledger = new UsageLedger(kv, { flushIntervalMs: 5 });
  // The ledger's flush has resolved, the reservations have not heard yet: what a busy event loop makes of it.
  const news = Promise.withResolvers<void>();
  const late: LedgerProgress = {
    markKey: ledger.markKey,
    get recorded() {
      return ledger.recorded;
    },
    flush: () => ledger.flush().then(() => news.promise),
    whenWritten: () => ledger.whenWritten().then(() => news.promise),
  };
  const reservations = new Reservations({ kv, ledger: late, defaultOutput: 4096 });
  // A concurrency limit sends every request to the store: nothing is lent from memory.
  const k = key("key_g", { dailyTokens: 100, maxConcurrent: 10 });
  const ask = (prompt: number, output: number) =>
    Promise.resolve(
      reservations.reserve(k.id, { limits: limitsOf(k, undefined, NOW), now: NOW, prompt, output }),
    );
  const first = await ask(10, 50);
  ledger.record(sample({ keyId: k.id, user: undefined, promptTokens: 60, completionTokens: 0 }));
  first.settle(60);
  await ledger.flush();
  assert.equal((await readTotals(kv, "key", k.id, new Date(NOW))).day, 60);
  const second = await ask(10, 30);
  assert.equal(second.output, 30, "40 of 100 are left, not 100 - 2 × 60");
  second.settle(0);
  news.resolve();
  await reservations.idle();
  await ledger.close();
  await reservations.close();
});
