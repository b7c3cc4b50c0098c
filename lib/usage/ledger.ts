/**
 * @module The usage ledger: every request leaves one record (key-less refusals beyond a per-minute budget
 * excepted, see `keyless_budget.ts`), and its tokens are added to the day, week and
 * month counters of its key and its key's user in the same atomic commit, so records and counters can never
 * disagree. `record()` only queues; group commits write the queue off the request path.
 *
 * Counters are read, checked and rewritten rather than `sum`med: Deno KV drops a key's expiry on `sum`,
 * and old periods must expire. The check makes a concurrent writer (another gateway on the same store)
 * force a retry instead of a lost update, so totals stay exact.
 */
import { monotonicFactory } from "ulid";
import type { UsageRecord } from "./types.ts";
import type { CounterObserver } from "./live_totals.ts";
import { readCounters, usageKey } from "./kv_layout.ts";
import { DEFAULT_KEYLESS_PER_MINUTE, isKeylessRefusal, KeylessBudget } from "./keyless_budget.ts";
import {
  type CounterDelta,
  MAX_BATCH_RECORDS,
  mergeCounters,
  type PendingRecord,
  prepare,
  repair,
  takeBatch,
} from "./batch.ts";

export { readTotals, type Totals, type TotalsScope } from "./kv_layout.ts";
export { listUsage, type UsageFilter } from "./history.ts";

export interface UsageLedgerOptions {
  /** Records per commit, at most 100 (default 100). */
  batchSize?: number;
  /** How soon queued records are written when nobody calls `flush()` (default 100 ms). */
  flushIntervalMs?: number;
  /**
   * Told when a batch could not be written after all its attempts (it stays queued and is tried again),
   * and when a malformed record had to be repaired. Default: console.error.
   */
  onError?: (error: unknown) => void;
  /** Attempts per batch before giving up for now (default 10). */
  maxAttempts?: number;
  /** First retry delay, doubled per attempt up to 1 s (default 10 ms). */
  retryDelayMs?: number;
  /** Told about every counter change as it is queued and written (the quota check's live totals). */
  observer?: CounterObserver;
  /** Rows kept per minute for refusals without a valid key (default 10); the rest are only counted. */
  keylessPerMinute?: number;
  /** Told once a minute how many key-less refusals were not written. Default: console.warn. */
  onNotice?: (message: string) => void;
}

interface Waiter {
  target: number;
  resolve: () => void;
  reject: (error: unknown) => void;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class UsageLedger {
  private readonly queue: PendingRecord[] = [];
  private readonly waiters: Waiter[] = [];
  /** Records ever queued and ever written; a flush waits until `written` reaches `queued` as it was. */
  private queued = 0;
  private written = 0;
  private writing: Promise<void> | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private closed = false;
  private readonly nextId = monotonicFactory();
  private readonly batchSize: number;
  private readonly intervalMs: number;
  private readonly maxAttempts: number;
  private readonly retryDelayMs: number;
  private readonly onError: (error: unknown) => void;
  private readonly observer?: CounterObserver;
  private readonly keyless: KeylessBudget;

  constructor(private readonly kv: Deno.Kv, options: UsageLedgerOptions = {}) {
    this.batchSize = Math.min(
      Math.max(Math.floor(options.batchSize ?? MAX_BATCH_RECORDS), 1),
      MAX_BATCH_RECORDS,
    );
    this.intervalMs = options.flushIntervalMs ?? 100;
    this.maxAttempts = Math.max(options.maxAttempts ?? 10, 1);
    this.retryDelayMs = options.retryDelayMs ?? 10;
    this.onError = options.onError ?? ((error) => console.error("usage ledger:", error));
    this.observer = options.observer;
    const perMinute = Math.max(Math.floor(options.keylessPerMinute ?? DEFAULT_KEYLESS_PER_MINUTE), 0);
    const notice = options.onNotice ?? ((message) => console.warn(`usage ledger: ${message}`));
    this.keyless = new KeylessBudget(perMinute, (count) =>
      notice(
        `${count} refusal(s) without a valid key in the last minute were counted but not recorded ` +
          `(at most ${perMinute} per minute are)`,
      ));
  }

  /** Refusals without a valid key that were counted but not written, since the ledger started. */
  get keylessSkipped(): number {
    return this.keyless.skipped;
  }

  /**
   * Queues one record; never waits for storage and never throws. A malformed record (unparseable time,
   * negative or fractional tokens) is repaired, kept and reported to `onError`. After `close()` a record
   * is written straight away instead of on the timer.
   */
  record(rec: UsageRecord): void {
    if (isKeylessRefusal(rec) && !this.keyless.take()) return;
    const { rec: fit, problems } = repair(rec, Date.now());
    if (problems.length) this.report(new TypeError(`Usage record repaired: ${problems.join("; ")}`));
    const pending = prepare(fit, this.nextId);
    this.queue.push(pending);
    this.observer?.queued(pending.counters);
    this.queued++;
    if (this.closed || this.queue.length >= this.batchSize) this.kick();
    else this.arm();
  }

  /** Resolves once everything recorded before the call is durable; rejects if that failed for now. */
  flush(): Promise<void> {
    const target = this.queued;
    if (this.written >= target) return Promise.resolve();
    const done = new Promise<void>((resolve, reject) => this.waiters.push({ target, resolve, reject }));
    this.kick();
    return done;
  }

  /** Stops the timer and flushes. */
  async close(): Promise<void> {
    if (!this.closed) this.keyless.close();
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.flush();
  }

  private arm(): void {
    if (this.timer !== undefined || this.closed) return;
    const timer = setTimeout(() => {
      this.timer = undefined;
      this.kick();
    }, this.intervalMs);
    // Queued usage must not keep a finished process alive; shutdown calls close() to write it.
    Deno.unrefTimer(timer);
    this.timer = timer;
  }

  /** Starts the single writer unless it is running; it drains whatever is queued, including later records. */
  private kick(): void {
    if (this.writing || !this.queue.length) return;
    this.writing = this.drain();
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length) {
        const batch = takeBatch(this.queue, this.batchSize);
        try {
          await this.commit(batch);
        } catch (error) {
          this.fail(error);
          return;
        }
        this.queue.splice(0, batch.length);
        this.written += batch.length;
        this.settle();
      }
    } finally {
      // Cleared in the same turn as the empty-queue test, so a record queued after it starts a new writer.
      this.writing = undefined;
    }
  }

  private settle(): void {
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      const waiter = this.waiters[i];
      if (waiter.target <= this.written) {
        this.waiters.splice(i, 1);
        waiter.resolve();
      }
    }
  }

  private fail(error: unknown): void {
    for (const waiter of this.waiters.splice(0)) waiter.reject(error);
    this.report(error);
    this.arm();
  }

  private report(error: unknown): void {
    try {
      this.onError(error);
    } catch {
      // A failing reporter must neither break the caller's response nor stop the writer.
    }
  }

  /**
   * Writes one batch exactly once. The batch's first row doubles as its marker: the commit requires it
   * absent, and after any failure its presence says whether the commit was applied after all (a commit
   * that throws may still have landed), so a retry neither loses nor repeats the batch.
   */
  private async commit(batch: PendingRecord[]): Promise<void> {
    const marker = usageKey(batch[0].id);
    const counters = mergeCounters(batch);
    this.observer?.committing(counters);
    let cause: unknown;
    for (let attempt = 1; attempt <= this.maxAttempts; attempt++) {
      if (attempt > 1) await sleep(this.backoff(attempt - 1));
      try {
        const op = this.kv.atomic().check({ key: marker, versionstamp: null });
        const totals = await this.addCounters(op, counters);
        for (const { rec, rows, expireIn } of batch) {
          for (const key of rows) op.set(key, rec, expireIn === undefined ? undefined : { expireIn });
        }
        const result = await op.commit();
        if (result.ok) {
          this.observer?.committed(counters, totals, result.versionstamp);
          return;
        }
        cause = new Error("a counter changed while the batch was being written");
      } catch (error) {
        cause = error;
      }
      try {
        const landed = await this.kv.get(marker);
        if (landed.versionstamp !== null) {
          // Which attempt landed is unknown, so are the totals it wrote; the marker shares its versionstamp.
          this.observer?.committed(counters, [], landed.versionstamp);
          return;
        }
      } catch {
        // Unknown for now; the next attempt's marker check settles it.
      }
    }
    this.observer?.abandoned(counters);
    const reason = cause instanceof Error ? cause.message : String(cause);
    throw new Error(
      `Cannot write ${batch.length} usage record(s) after ${this.maxAttempts} attempts: ${reason}`,
      {
        cause,
      },
    );
  }

  /** Adds each counter's check and new total to `op`; returns the totals. */
  private async addCounters(op: Deno.AtomicOperation, counters: CounterDelta[]): Promise<bigint[]> {
    const read = await readCounters(this.kv, counters.map((c) => c.key));
    return read.map((entry, i) => {
      const { delta, expireIn } = counters[i];
      const total = (entry.value?.value ?? 0n) + delta;
      op.check(entry).set(entry.key, new Deno.KvU64(total), { expireIn });
      return total;
    });
  }

  private backoff(retry: number): number {
    const base = Math.min(this.retryDelayMs * 2 ** (retry - 1), 1000);
    // Jitter, so gateways that collided on a counter do not collide again in step.
    return base / 2 + Math.random() * base / 2;
  }
}
