/**
 * @module The usage ledger: every request leaves one record (key-less refusals beyond a per-minute budget
 * excepted, see `keyless_budget.ts`), and its tokens are added to the day, week and
 * month counters of its key and its key's user in the same atomic commit, so records and counters can never
 * disagree. `record()` only adds to the open batch (`batch.ts`); group commits write batches off the request
 * path, each once it is full or once the flush interval has passed.
 *
 * Counters are checked and rewritten rather than `sum`med: Deno KV drops a key's expiry on `sum`, and old
 * periods must expire. The check makes a concurrent writer (another gateway on the same store) force a
 * retry instead of a lost update, so totals stay exact. A counter is read only when this ledger did not
 * write it last; otherwise the check is against the versionstamp of its own write.
 */
import { monotonicFactory } from "ulid";
import type { UsageRecord } from "./types.ts";
import type { CounterObserver, PendingTokens } from "./live_totals.ts";
import { readCounters, type TotalsScope, usageByKeyKey, usageKey } from "./kv_layout.ts";
import {
  DEFAULT_KEYLESS_PER_MINUTE,
  isKeylessRefusal,
  KEYLESS_ROW_TTL_MS,
  KeylessBudget,
} from "./keyless_budget.ts";
import { Batch, type CounterDelta, MAX_BATCH_RECORDS, repair, validTime } from "./batch.ts";
import { RecordEncoder } from "./row_codec.ts";

export { readTotals, type Totals, type TotalsScope } from "./kv_layout.ts";
export { listUsage, type UsageFilter } from "./history.ts";

export interface UsageLedgerOptions {
  /** Records per commit, at most 250 (default 250; fewer when they are large). */
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
  /** Asks for the tokens not written yet, and is told about every commit (the quota check's live totals). */
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

const MAX_KNOWN_COUNTERS = 10_000;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class UsageLedger implements PendingTokens {
  /** The batch records go into; sealed when full, or when the writer takes it. */
  private open = new Batch(undefined);
  /** Sealed batches not written yet, oldest first; the writer commits them in this order. */
  private readonly sealed: Batch[] = [];
  private readonly waiters: Waiter[] = [];
  /** Records ever queued and ever written; a flush waits until `written` reaches `queued` as it was. */
  private queued = 0;
  private written = 0;
  private writing: Promise<void> | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private closed = false;
  /** The timer fired since the open batch was last sealed: it is written however few records it holds. */
  private due = false;
  private readonly nextId = monotonicFactory();
  private readonly encoder = new RecordEncoder();
  private readonly batchSize: number;
  private readonly intervalMs: number;
  private readonly maxAttempts: number;
  private readonly retryDelayMs: number;
  private readonly onError: (error: unknown) => void;
  private readonly observer?: CounterObserver;
  private readonly keyless: KeylessBudget;
  /** Counters as this ledger last read or wrote them, so a commit need not read them first. */
  private readonly known = new Map<string, { total: bigint; versionstamp: string | null }>();

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
    this.observer?.attach(this);
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
    const keyless = isKeylessRefusal(rec);
    if (keyless && !this.keyless.take()) return;
    let timeMs = validTime(rec);
    let fit = rec;
    if (timeMs !== timeMs) {
      const repaired = repair(rec, Date.now());
      this.report(new TypeError(`Usage record repaired: ${repaired.problems.join("; ")}`));
      fit = repaired.rec;
      timeMs = Date.parse(fit.time);
    }
    // The encoded values are the ledger's own copy: what the caller does with its object later is its own.
    const encoded = this.encoder.encode(fit);
    const { names, bytes } = this.encoder;
    const expireIn = keyless ? KEYLESS_ROW_TTL_MS : undefined;
    let batch = this.open;
    if (batch.expireIn !== expireIn || !batch.tryAdd(fit, encoded, names, bytes, timeMs)) {
      if (batch.records.length) this.seal();
      batch = this.open = new Batch(expireIn);
      batch.tryAdd(fit, encoded, names, bytes, timeMs);
    }
    this.queued++;
    if (batch.records.length >= this.batchSize) this.seal();
    if (this.closed || this.sealed.length) this.kick();
    if (this.open.records.length) this.arm();
  }

  /** Tokens recorded and not yet written for a counter: the quota check adds them to the stored value. */
  pending(scope: TotalsScope, owner: string, label: string): number {
    let tokens = this.open.sums.pending(scope, owner, label);
    for (const batch of this.sealed) tokens += batch.sums.pending(scope, owner, label);
    return tokens;
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
      this.due = true;
      this.kick();
    }, this.intervalMs);
    // Queued usage must not keep a finished process alive; shutdown calls close() to write it.
    Deno.unrefTimer(timer);
    this.timer = timer;
  }

  /** Moves the open batch, if it has records, to the end of the sealed ones and starts a new one. */
  private seal(): void {
    const batch = this.open;
    if (!batch.records.length) return;
    // The id never precedes a record's time (a scan from an instant finds all records since), nor an id
    // this ledger drew before (rows list in the order they were recorded).
    batch.seal(this.nextId(Math.max(Date.now(), batch.maxTimeMs)));
    this.sealed.push(batch);
    this.open = new Batch(batch.expireIn);
  }

  /**
   * Whether the open batch is to be written before it is full: once the interval has passed, when someone
   * waits for it, or after `close()`. Otherwise it keeps filling while the full ones are written, so under
   * load every commit carries a full batch instead of whatever arrived during the previous commit.
   */
  private openIsDue(): boolean {
    return this.open.records.length > 0 && (this.due || this.closed || this.waiters.length > 0);
  }

  /** Starts the single writer unless it is running; it drains whatever is queued, including later records. */
  private kick(): void {
    if (this.writing || (!this.sealed.length && !this.openIsDue())) return;
    this.writing = this.drain();
  }

  private async drain(): Promise<void> {
    try {
      for (;;) {
        if (!this.sealed.length) {
          if (!this.openIsDue()) break;
          this.due = false;
          this.seal();
        }
        try {
          await this.commit(this.sealed[0]);
        } catch (error) {
          this.fail(error);
          return;
        }
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
   * Writes one sealed batch exactly once. Its row doubles as its marker: the commit requires it absent, and
   * after any failure its presence says whether the commit was applied after all (a commit that throws may
   * still have landed), so a retry neither loses nor repeats the batch.
   */
  private async commit(batch: Batch): Promise<void> {
    const marker = usageKey(batch.id);
    const { counters } = batch;
    const options = batch.expireIn === undefined ? undefined : { expireIn: batch.expireIn };
    this.observer?.committing(counters);
    let cause: unknown;
    for (let attempt = 1; attempt <= this.maxAttempts; attempt++) {
      // A first conflict is most often a counter another process wrote since this one last did: no wait.
      if (attempt > 2) await sleep(this.backoff(attempt - 2));
      try {
        const op = this.kv.atomic().check({ key: marker, versionstamp: null });
        const totals = counters.length ? await this.addCounters(op, counters) : [];
        op.set(marker, batch.row, options);
        for (const [keyId, places] of batch.index) op.set(usageByKeyKey(keyId, batch.id), places, options);
        const result = await op.commit();
        if (result.ok) {
          for (let i = 0; i < counters.length; i++) {
            this.known.set(counters[i].id, { total: totals[i], versionstamp: result.versionstamp });
          }
          this.done(batch, totals, result.versionstamp);
          return;
        }
        cause = new Error("a counter changed while the batch was being written");
      } catch (error) {
        cause = error;
      }
      // Another writer may have moved a counter: the next attempt reads them all.
      for (const c of counters) this.known.delete(c.id);
      try {
        const landed = await this.kv.get(marker);
        if (landed.versionstamp !== null) {
          // Which attempt landed is unknown, so are the totals it wrote; the marker shares its versionstamp.
          this.done(batch, [], landed.versionstamp);
          return;
        }
      } catch {
        // Unknown for now; the next attempt's marker check settles it.
      }
    }
    this.observer?.abandoned(counters);
    const reason = cause instanceof Error ? cause.message : String(cause);
    throw new Error(
      `Cannot write ${batch.records.length} usage record(s) after ${this.maxAttempts} attempts: ${reason}`,
      { cause },
    );
  }

  /**
   * The batch is durable. Its tokens leave `pending` in the same turn as the observer takes in the totals
   * they are part of, so no quota check in between sees them twice or not at all.
   */
  private done(batch: Batch, totals: readonly bigint[], versionstamp: string): void {
    this.sealed.shift();
    this.written += batch.records.length;
    this.observer?.committed(batch.counters, totals, versionstamp);
  }

  /**
   * Adds each counter's check and new total to `op`; returns the totals. A counter this ledger wrote last
   * is not read again: its check against the versionstamp of that write fails the commit if anyone wrote
   * it since (or it expired), and the retry reads it.
   */
  private async addCounters(op: Deno.AtomicOperation, counters: CounterDelta[]): Promise<bigint[]> {
    const unknown = counters.filter((c) => !this.known.has(c.id));
    if (unknown.length) {
      const read = await readCounters(this.kv, unknown.map((c) => c.key));
      // Entries of counters of past periods or idle keys would pile up; those of the next batch are read.
      if (this.known.size + unknown.length > MAX_KNOWN_COUNTERS) this.known.clear();
      read.forEach((entry, i) => {
        this.known.set(unknown[i].id, { total: entry.value?.value ?? 0n, versionstamp: entry.versionstamp });
      });
    }
    return counters.map(({ key, id, delta, expireIn }) => {
      const { total, versionstamp } = this.known.get(id)!;
      op.check({ key, versionstamp }).set(key, new Deno.KvU64(total + delta), { expireIn });
      return total + delta;
    });
  }

  private backoff(retry: number): number {
    const base = Math.min(this.retryDelayMs * 2 ** (retry - 1), 1000);
    // Jitter, so gateways that collided on a counter do not collide again in step.
    return base / 2 + Math.random() * base / 2;
  }
}
