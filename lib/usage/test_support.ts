/**
 * @module Test support for the ledger: a sample record, both kinds of store (in memory and a temp file,
 * whose commit path differs), a store whose commits fail on cue, and the independent arithmetic that
 * says what every counter must hold for a set of records.
 */
import assert from "node:assert/strict";
import { monotonicFactory } from "ulid";
import type { UsageRecord } from "./types.ts";
import { periodKeys } from "./periods.ts";
import { type IndexRow, type LedgerRow, rowRecords } from "./kv_layout.ts";
import { decodeRow, isBatchRow } from "./row_codec.ts";
import { isKeylessRefusal } from "./keyless_budget.ts";

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

/** What every counter must hold, computed from the records alone. */
export function expectedCounters(records: UsageRecord[]): Map<string, bigint> {
  const out = new Map<string, bigint>();
  for (const rec of records) {
    const tokens = BigInt(rec.promptTokens + rec.completionTokens);
    if (tokens === 0n) continue;
    const labels = Object.values(periodKeys(new Date(rec.time)));
    for (const [scope, id] of [["key", rec.keyId], ["user", rec.user]]) {
      if (id === undefined) continue;
      for (const label of labels) {
        const key = JSON.stringify(["tokens", scope, id, label]);
        out.set(key, (out.get(key) ?? 0n) + tokens);
      }
    }
  }
  return out;
}

export async function storedCounters(kv: Deno.Kv): Promise<Map<string, bigint>> {
  const out = new Map<string, bigint>();
  for await (const entry of kv.list<Deno.KvU64>({ prefix: ["tokens"] })) {
    out.set(JSON.stringify(entry.key), entry.value.value);
  }
  return out;
}

export async function rows(kv: Deno.Kv, prefix: Deno.KvKey): Promise<Deno.KvEntry<LedgerRow>[]> {
  return await Array.fromAsync(kv.list<LedgerRow>({ prefix }));
}

/** Every record in the rows under `prefix`, in row order and then in their order within a row. */
export async function records(kv: Deno.Kv, prefix: Deno.KvKey): Promise<UsageRecord[]> {
  return (await rows(kv, prefix)).flatMap((entry) => rowRecords(entry.value));
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
 * Every record stored exactly once, in batch rows; for each key of a batch row one index row naming exactly
 * the places of that key's records in it, and no other index row; every counter exact.
 */
export async function assertLedgerMatches(kv: Deno.Kv, expected: UsageRecord[]): Promise<void> {
  const canon = (list: UsageRecord[]) => list.map((r) => JSON.stringify(r)).sort();
  const batches = await rows(kv, ["usage"]);
  const index = new Map<string, IndexRow>();
  for await (const entry of kv.list<IndexRow>({ prefix: ["usage_by_key"] })) {
    index.set(JSON.stringify(entry.key), entry.value);
  }
  const stored: UsageRecord[] = [];
  for (const { key, value: row } of batches) {
    assert.ok(isBatchRow(row), `batch row ${String(key[1])}`);
    const value = decodeRow(row);
    assert.ok(value.length > 0 && value.length <= 250, `batch row ${String(key[1])}`);
    assert.equal(key.length, 2);
    const keyless = value.filter(isKeylessRefusal).length;
    assert.ok(keyless === 0 || keyless === value.length, "expiring and kept records never share a row");
    stored.push(...value);
    const places = Map.groupBy(
      value.keys().filter((i) => value[i].keyId !== undefined),
      (i) => value[i].keyId!,
    );
    for (const [keyId, own] of places) {
      const indexKey = JSON.stringify(["usage_by_key", keyId, key[1]]);
      assert.deepEqual(index.get(indexKey), Uint8Array.from(own), indexKey);
      index.delete(indexKey);
    }
  }
  assert.deepEqual([...index.keys()], [], "no index row without its batch row");
  assert.deepEqual(canon(stored), canon(expected));
  assert.deepEqual(await storedCounters(kv), expectedCounters(expected));
}
