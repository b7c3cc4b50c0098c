/**
 * @module Test support for the ledger: a sample record, both kinds of store (in memory and a temp file,
 * whose commit path differs), a store whose commits fail on cue or note what they set, rows as a store
 * written before batching holds them, and the check that the ledger holds a set of records, made through
 * its public reads with arithmetic of its own.
 */
import assert from "node:assert/strict";
import { monotonicFactory } from "ulid";
import type { UsageRecord } from "../../lib/usage/types.ts";
import { periodKeys, type PeriodName } from "../../lib/usage/periods.ts";
import { type LedgerRow, readTotals } from "../../lib/usage/kv_layout.ts";
import { listUsage } from "../../lib/usage/history.ts";

export function sample(overrides: Partial<UsageRecord> = {}): UsageRecord {
  return {
    time: "2026-11-22T12:00:00.000Z",
    keyId: "key_a",
    user: "alice",
    model: "llama3",
    server: "gpu1",
    format: "openai",
    stream: false,
    status: "ok",
    httpStatus: 200,
    promptTokens: 10,
    completionTokens: 5,
    tokenSource: "backend",
    latencyMs: 120,
    ttfbMs: 30,
    ...overrides,
  };
}

/** Registers `fn` twice: against an in-memory store and against a store in a temporary file. */
export function storeTest(name: string, fn: (kv: Deno.Kv) => Promise<void>): void {
  Deno.test(`${name} (memory)`, async () => {
    const kv = await Deno.openKv(":memory:");
    try {
      await fn(kv);
    } finally {
      kv.close();
    }
  });
  Deno.test(`${name} (file)`, async () => {
    const dir = await Deno.makeTempDir({ prefix: "usage_ledger_test_" });
    const kv = await Deno.openKv(`${dir}/usage.kv`);
    try {
      await fn(kv);
    } finally {
      kv.close();
      await Deno.remove(dir, { recursive: true });
    }
  });
}

/** `kv` whose atomic operations pass through `wrapOp`; everything else is the store's own. */
function withAtomic(kv: Deno.Kv, wrapOp: (op: Deno.AtomicOperation) => Deno.AtomicOperation): Deno.Kv {
  return new Proxy(kv, {
    get(target, prop) {
      if (prop === "atomic") return () => wrapOp(target.atomic());
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** How a wrapped commit misbehaves: refuse (ok: false), throw, or apply and then throw anyway. */
export type CommitFault = "refuse" | "throw" | "land-then-throw";

/** `kv` whose next commits fail as `faults` says, one fault per commit, then behave. */
export function faultyStore(kv: Deno.Kv, faults: CommitFault[]): { kv: Deno.Kv; commits: () => number } {
  let commits = 0;
  const wrapOp = (op: Deno.AtomicOperation): Deno.AtomicOperation => {
    const proxy: Deno.AtomicOperation = new Proxy(op, {
      get(target, prop) {
        if (prop === "commit") {
          return async () => {
            commits++;
            const fault = faults.shift();
            if (fault === "refuse") return { ok: false };
            if (fault === "throw") throw new Error("connection reset");
            const result = await target.commit();
            if (fault === "land-then-throw") throw new Error("connection reset after commit");
            return result;
          };
        }
        const value = Reflect.get(target, prop, target);
        if (typeof value !== "function") return value;
        return (...args: unknown[]) => {
          const result = value.apply(target, args);
          return result === target ? proxy : result;
        };
      },
    });
    return proxy;
  };
  const wrapped = withAtomic(kv, wrapOp);
  return { kv: wrapped, commits: () => commits };
}

/**
 * The ledger's rows as stored. Only for the tests that mix in rows of a store written before batching (a
 * format this version must still read), to see that a listing really crossed both kinds.
 */
export async function rows(kv: Deno.Kv, prefix: Deno.KvKey): Promise<Deno.KvEntry<LedgerRow>[]> {
  return await Array.fromAsync(kv.list<LedgerRow>({ prefix }));
}

/**
 * Writes `records` as the ledger did before batching: one row per record, its id drawn when it was queued
 * from the record's time, and the same record again in the per-key index.
 */
export async function writeOldLayout(kv: Deno.Kv, records: UsageRecord[]): Promise<void> {
  const nextId = monotonicFactory();
  for (const rec of records) {
    const id = nextId(Date.parse(rec.time));
    const op = kv.atomic().set(["usage", id], rec);
    if (rec.keyId !== undefined) op.set(["usage_by_key", rec.keyId, id], rec);
    await op.commit();
  }
}

/** `kv` that notes every row an atomic operation sets, with its expiry. */
export function recordingStore(kv: Deno.Kv): { kv: Deno.Kv; sets: { key: Deno.KvKey; expireIn?: number }[] } {
  const sets: { key: Deno.KvKey; expireIn?: number }[] = [];
  const wrapOp = (op: Deno.AtomicOperation): Deno.AtomicOperation => {
    const proxy: Deno.AtomicOperation = new Proxy(op, {
      get(target, prop) {
        const value = Reflect.get(target, prop, target);
        if (typeof value !== "function") return value;
        return (...args: unknown[]) => {
          if (prop === "set") {
            const [key, , options] = args as [Deno.KvKey, unknown, { expireIn?: number } | undefined];
            sets.push({ key, expireIn: options?.expireIn });
          }
          const result = value.apply(target, args);
          return result === target ? proxy : result;
        };
      },
    });
    return proxy;
  };
  const wrapped = withAtomic(kv, wrapOp);
  return { kv: wrapped, sets };
}

/**
 * What the ledger promises, read back the way the policy and the admin read it (`listUsage`, `readTotals`):
 * every record listed exactly once, and found again by its key and by its user; every key's and user's
 * day, week and month totals exact at every instant a record fell on. How rows and counters are laid out
 * is left to the ledger.
 */
export async function assertLedgerHolds(kv: Deno.Kv, expected: UsageRecord[]): Promise<void> {
  const canon = (list: UsageRecord[]) => list.map((r) => JSON.stringify(r)).sort();
  // One more than expected, so a record stored twice shows.
  const limit = expected.length + 1;
  assert.deepEqual(canon(await listUsage(kv, { limit })), canon(expected), "every record, once");
  for (const keyId of new Set(expected.flatMap((r) => r.keyId ?? []))) {
    const own = expected.filter((r) => r.keyId === keyId);
    assert.deepEqual(canon(await listUsage(kv, { keyId, limit })), canon(own), `the records of ${keyId}`);
  }
  for (const user of new Set(expected.flatMap((r) => r.user ?? []))) {
    const own = expected.filter((r) => r.user === user);
    assert.deepEqual(canon(await listUsage(kv, { user, limit })), canon(own), `the records of ${user}`);
  }
  for (const scope of ["key", "user"] as const) {
    const ownerOf = (r: UsageRecord) => scope === "key" ? r.keyId : r.user;
    for (const [owner, own] of Map.groupBy(expected, ownerOf)) {
      if (owner === undefined) continue;
      for (const time of new Set(own.map((r) => r.time))) {
        const at = periodKeys(new Date(time));
        const sum = (period: PeriodName) =>
          own.filter((r) => periodKeys(new Date(r.time))[period] === at[period])
            .reduce((n, r) => n + r.promptTokens + r.completionTokens, 0);
        assert.deepEqual(
          await readTotals(kv, scope, owner, new Date(time)),
          { day: sum("day"), week: sum("week"), month: sum("month") },
          `${scope} ${owner} at ${time}`,
        );
      }
    }
  }
}
