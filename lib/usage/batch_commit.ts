/**
 * @module Writing one sealed usage batch exactly once: its row, its per-key index rows and its counters in one
 * atomic commit, retried until it lands or the attempts run out. The batch row doubles as the commit's marker:
 * the commit requires it absent, and after any failure its presence says whether the commit was applied
 * after all (a commit that throws may still have landed), so a retry neither loses nor repeats the batch.
 *
 * Counters are checked and rewritten rather than `sum`med: Deno KV drops a key's expiry on `sum`, and old
 * periods must expire. The check makes a concurrent writer (another gateway on the same store) force a retry
 * instead of a lost update. A counter is read only when this writer did not write it last; otherwise the
 * check is against the versionstamp of its own write.
 */
import type { CounterObserver } from "./live_totals.ts";
import { readCounters, usageByKeyKey, usageKey } from "./kv_layout.ts";
import type { Batch } from "./batch.ts";
import type { CounterDelta } from "./counter_sums.ts";

/** Counters remembered at most; past it the cache starts over (the next batch reads its counters). */
const MAX_KNOWN_COUNTERS = 10_000;

/**
 * The ledger's mark outlives its last commit by this much: a reader needs it only for records billed and not yet
 * known written, which are seconds old.
 */
const MARK_TTL_MS = 86_400_000;

/** Where the ledger's count of written records goes, and what it is once this batch landed. */
export interface LedgerMark {
  key: Deno.KvKey;
  written: number;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export interface BatchCommitOptions {
  maxAttempts: number;
  /** First retry delay, doubled per attempt up to 1 s. */
  retryDelayMs: number;
  observer?: CounterObserver;
}

export class BatchCommit {
  /** Counters as this writer last read or wrote them, so a commit need not read them first. */
  readonly #known = new Map<string, { total: bigint; versionstamp: string | null }>();

  constructor(private readonly kv: Deno.Kv, private readonly options: BatchCommitOptions) {}

  /**
   * Writes `batch`; `landed` is called in the same turn as the commit is known to have landed, with the
   * counters' new totals (empty when only the marker confirmed it) and the commit's versionstamp. Throws
   * once every attempt failed; the batch was then not written.
   */
  async write(
    batch: Batch,
    mark: LedgerMark,
    landed: (totals: readonly bigint[], versionstamp: string) => void,
  ): Promise<void> {
    const { maxAttempts, observer } = this.options;
    const marker = usageKey(batch.id);
    const { counters } = batch;
    const options = batch.expireIn === undefined ? undefined : { expireIn: batch.expireIn };
    observer?.committing(counters);
    let cause: unknown;
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      // A first conflict is most often a counter another process wrote since this one last did: no wait.
      if (attempt > 2) await sleep(this.#backoff(attempt - 2));
      try {
        const op = this.kv.atomic().check({ key: marker, versionstamp: null });
        const totals = counters.length ? await this.#addCounters(op, counters) : [];
        op.set(marker, batch.row, options);
        op.set(mark.key, new Deno.KvU64(BigInt(mark.written)), { expireIn: MARK_TTL_MS });
        for (const [keyId, places] of batch.index) op.set(usageByKeyKey(keyId, batch.id), places, options);
        const result = await op.commit();
        if (result.ok) {
          for (let i = 0; i < counters.length; i++) {
            this.#known.set(counters[i].id, { total: totals[i], versionstamp: result.versionstamp });
          }
          landed(totals, result.versionstamp);
          return;
        }
        cause = new Error("a counter changed while the batch was being written");
      } catch (error) {
        cause = error;
      }
      // Another writer may have moved a counter: the next attempt reads them all.
      for (const c of counters) this.#known.delete(c.id);
      try {
        const row = await this.kv.get(marker);
        if (row.versionstamp !== null) {
          // Which attempt landed is unknown, so are the totals it wrote; the marker shares its versionstamp.
          landed([], row.versionstamp);
          return;
        }
      } catch {
        // Unknown for now; the next attempt's marker check settles it.
      }
    }
    observer?.abandoned(counters);
    const reason = cause instanceof Error ? cause.message : String(cause);
    throw new Error(
      `Cannot write ${batch.records.length} usage record(s) after ${maxAttempts} attempts: ${reason}`,
      { cause },
    );
  }

  /**
   * Adds each counter's check and new total to `op`; returns the totals. A counter this writer wrote last
   * is not read again: its check against the versionstamp of that write fails the commit if anyone wrote
   * it since (or it expired), and the retry reads it.
   */
  async #addCounters(op: Deno.AtomicOperation, counters: CounterDelta[]): Promise<bigint[]> {
    const unknown = counters.filter((c) => !this.#known.has(c.id));
    if (unknown.length) {
      const read = await readCounters(this.kv, unknown.map((c) => c.key));
      // Entries of counters of past periods or idle keys would pile up; those of the next batch are read.
      if (this.#known.size + unknown.length > MAX_KNOWN_COUNTERS) this.#known.clear();
      read.forEach((entry, i) => {
        this.#known.set(unknown[i].id, { total: entry.value?.value ?? 0n, versionstamp: entry.versionstamp });
      });
    }
    return counters.map(({ key, id, delta, expireIn }) => {
      const { total, versionstamp } = this.#known.get(id)!;
      op.check({ key, versionstamp }).set(key, new Deno.KvU64(total + delta), { expireIn });
      return total + delta;
    });
  }

  #backoff(retry: number): number {
    const base = Math.min(this.options.retryDelayMs * 2 ** (retry - 1), 1000);
    // Jitter, so gateways that collided on a counter do not collide again in step.
    return base / 2 + Math.random() * base / 2;
  }
}
