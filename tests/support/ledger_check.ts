/**
 * Reading a gateway's store file back after the process is gone, the way `deno task admin usage` and the
 * quotas read it (`listUsage`, `readTotals`), and checking what the ledger promises: every record's row and
 * its counter increments were committed together, so the day, week and month totals of each key and user
 * equal the sums of their records exactly, and a key's own listing holds exactly its records. How rows,
 * index and counters are laid out is the ledger's business (lib/usage/kv_layout.ts).
 */
import assert from "node:assert/strict";
import { listUsage, PERIOD_NAMES, periodKeys, readTotals, type UsageRecord } from "../../lib/usage/mod.ts";

/** More than any test writes: a listing this long is the whole ledger. */
const ALL = 1_000_000;

export interface StoredLedger {
  /** Every record, oldest first, by its place in that listing. */
  records: Map<string, UsageRecord>;
  /** Each key's own listing, as a key filter reads it. */
  byKey: Map<string, UsageRecord[]>;
  /**
   * Token totals as the quotas read them, `scope/owner/period` → tokens, for every period one of the owner's
   * records fell in; periods with no tokens are left out.
   */
  counters: Map<string, number>;
}

/** Opens the store file (no gateway may be running on it) and reads every record and the totals they touch. */
export async function readLedger(path: string): Promise<StoredLedger> {
  const kv = await Deno.openKv(path);
  try {
    const all = perRequest(await listUsage(kv, { limit: ALL }));
    const ledger: StoredLedger = {
      records: new Map(all.map((rec, i) => [String(i), rec])),
      byKey: new Map(),
      counters: new Map(),
    };
    for (const keyId of new Set(all.flatMap((r) => r.keyId ?? []))) {
      ledger.byKey.set(keyId, perRequest(await listUsage(kv, { keyId, limit: ALL })));
    }
    for (const scope of ["key", "user"] as const) {
      const owners = Map.groupBy(all, (r) => scope === "key" ? r.keyId : r.user);
      for (const [owner, own] of owners) {
        if (owner === undefined) continue;
        for (const time of new Set(own.map((r) => r.time))) {
          const totals = await readTotals(kv, scope, owner, new Date(time));
          const labels = periodKeys(new Date(time));
          for (const name of PERIOD_NAMES) {
            if (totals[name] > 0) ledger.counters.set(`${scope}/${owner}/${labels[name]}`, totals[name]);
          }
        }
      }
    }
    return ledger;
  } finally {
    kv.close();
  }
}

/** The totals the records add up to, keyed like `StoredLedger.counters`. */
export function countersFromRecords(records: Iterable<UsageRecord>): Map<string, number> {
  const sums = new Map<string, number>();
  for (const rec of records) {
    const tokens = rec.promptTokens + rec.completionTokens;
    if (tokens === 0) continue;
    const labels = periodKeys(new Date(rec.time));
    for (const [scope, owner] of [["key", rec.keyId], ["user", rec.user]] as const) {
      if (owner === undefined) continue;
      for (const name of PERIOD_NAMES) {
        const id = `${scope}/${owner}/${labels[name]}`;
        sums.set(id, (sums.get(id) ?? 0) + tokens);
      }
    }
  }
  return sums;
}

const sorted = (map: Map<string, number>) =>
  Object.fromEntries([...map].sort(([a], [b]) => a.localeCompare(b)));

const canon = (list: UsageRecord[]) => list.map((r) => JSON.stringify(r)).sort();

/** Totals equal the sums of the records, and each key's listing holds exactly the records of that key. */
export function assertLedgerConsistent(ledger: StoredLedger): void {
  assert.deepEqual(sorted(ledger.counters), sorted(countersFromRecords(ledger.records.values())));
  for (const [keyId, listed] of ledger.byKey) {
    assert.deepEqual(canon(listed), canon(recordsOf(ledger, keyId)), `the listing of ${keyId}`);
  }
}

/** The records of one key. */
/**
 * One record per request: a row of folded refusals (`count`) stands for that many, each counted here as the
 * request it was; its tokens, if any, go to the first.
 */
function perRequest(records: UsageRecord[]): UsageRecord[] {
  return records.flatMap((rec) => {
    if (rec.count === undefined) return [rec];
    const { count, ...one } = rec;
    const none = { ...one, promptTokens: 0, completionTokens: 0 };
    return [one, ...Array.from({ length: count - 1 }, () => none)];
  });
}

export function recordsOf(ledger: StoredLedger, keyId: string): UsageRecord[] {
  return [...ledger.records.values()].filter((rec) => rec.keyId === keyId);
}
