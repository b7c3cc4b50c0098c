/**
 * @module The ledger while its store does not answer (a network store in an outage, whose client waits for
 * it without end): records wait in memory, the backlog says how many and when it is past its bound, they are
 * written once when the store answers again, and a close that the store never answers gives up, saying what
 * was not written.
 */
import assert from "node:assert/strict";
import { listUsage, UsageLedger } from "./ledger.ts";
import { assertLedgerHolds, sample } from "../../tests/support/usage_ledger.ts";

/** The store, with every read and commit held until `open()`; as many as were held are counted. */
function gatedStore(kv: Deno.Kv) {
  const gate = Promise.withResolvers<void>();
  let held = 0;
  const later = <T>(work: () => Promise<T>) => (held++, gate.promise.then(work));
  const store = new Proxy(kv, {
    get(target, prop) {
      if (prop === "get" || prop === "getMany") {
        const read = (target[prop] as (...args: unknown[]) => Promise<unknown>).bind(target);
        return (...args: unknown[]) => later(() => read(...args));
      }
      if (prop === "atomic") {
        return () => {
          const op = target.atomic();
          const commit = op.commit.bind(op);
          op.commit = () => later(commit);
          return op;
        };
      }
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { kv: store, open: () => gate.resolve(), held: () => held };
}

const records = Array.from({ length: 25 }, (_, i) => sample({ promptTokens: i + 1, keyId: `key_${i % 2}` }));

Deno.test("while the store does not answer, records wait in memory, full past the bound, and are written once when it does", async () => {
  using kv = await Deno.openKv(":memory:");
  const store = gatedStore(kv);
  const ledger = new UsageLedger(store.kv, { batchSize: 10, flushIntervalMs: 1, maxBacklog: 20 });
  for (const rec of records.slice(0, 19)) ledger.record(rec);
  assert.deepEqual([ledger.backlog, ledger.full], [19, false]);
  for (const rec of records.slice(19)) ledger.record(rec);
  assert.deepEqual([ledger.backlog, ledger.full], [25, true]);
  const flushed = ledger.flush();
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.ok(store.held() > 0, "the writer waits at the store");
  assert.deepEqual(await listUsage(kv), []);
  store.open();
  await flushed;
  assert.deepEqual([ledger.backlog, ledger.full], [0, false]);
  await ledger.close();
  await assertLedgerHolds(kv, records);
});

Deno.test("a close the store does not answer gives up once no batch lands for closeWaitMs, naming what was not written", async () => {
  using kv = await Deno.openKv(":memory:");
  const store = gatedStore(kv);
  const ledger = new UsageLedger(store.kv, { closeWaitMs: 30, onError: () => {} });
  for (const rec of records.slice(0, 4)) ledger.record(rec);
  const waiting = ledger.flush().then(() => undefined, (error: Error) => error.message);
  await assert.rejects(ledger.close(), /4 usage record\(s\) with 30 token\(s\) were not written/);
  assert.match((await waiting)!, /were not written/, "a flush waiting then fails too");
  await assert.rejects(ledger.flush(), /were not written/);
});
