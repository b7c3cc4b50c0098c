/**
 * @module The usage ledger: every request leaves one record (key-less refusals beyond a per-minute budget
 * excepted, see `keyless_budget.ts`), and its tokens are added to the day, week and
 * month counters of its key and its key's user in the same atomic commit, so records and counters can never
 * disagree. `record()` only adds to the open batch (`batch.ts`); group commits write batches off the request
 * path, each once it is full or once the flush interval has passed, each exactly once (`batch_commit.ts`).
 *
 * Refusals are bounded like any flood: those without a key by `keyless_budget.ts`, those of a key by
 * `refusal_fold.ts`, so a client that keeps being refused writes a few rows a minute, each counted.
 *
 * A store that does not answer (a network store in an outage: Deno's client keeps trying until it is back)
 * holds the writer at its commit; records keep being queued meanwhile and are written, in order, once the
 * commit lands. A commit that is sent again (by the client, or by a retry here) cannot land twice: each batch
 * carries its own marker row, which its commit requires absent. Memory bounds the wait: past `maxBacklog`
 * records queued and not written, `full` says so and the policy refuses requests (503) until the store takes
 * them. A shutdown while the store does not answer gives up once no batch has landed for `closeWaitMs`, and
 * says how many records and tokens were not written.
 */
import { monotonicFactory } from "ulid";
import type { LedgerProgress, UsageRecord } from "./types.ts";
import type { CounterObserver, PendingTokens } from "./live_totals.ts";
import { type TotalsScope, usageMarkKey } from "./kv_layout.ts";
import { BatchCommit } from "./batch_commit.ts";
import { isKeylessRefusal, KEYLESS_ROW_TTL_MS } from "./keyless_budget.ts";
import { Batch, MAX_BATCH_RECORDS, repair, validTime } from "./batch.ts";
import { RefusalRows } from "./refusal_rows.ts";
import { RecordEncoder } from "./row_codec.ts";
import { DEFAULT_MAX_BACKLOG, type UsageLedgerOptions } from "./ledger_options.ts";
import { FlushWaiters } from "./flush_waiters.ts";

export { readTotals, type Totals, type TotalsScope } from "./kv_layout.ts";
export { listUsage, type UsageFilter } from "./history.ts";
export type { LedgerProgress } from "./types.ts";

export class UsageLedger implements PendingTokens, LedgerProgress {
  /** The batch records go into; sealed when full, or when the writer takes it. */
  private open = new Batch(undefined);
  /** Sealed batches not written yet, oldest first; the writer commits them in this order. */
  private readonly sealed: Batch[] = [];
  private readonly waiters = new FlushWaiters();
  /** Records ever queued and ever written; a flush waits until `written` reaches `queued` as it was. */
  private queued = 0;
  private written = 0;
  private writing: Promise<void> | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private closed = false;
  /** The timer fired since the open batch was last sealed: it is written however few records it holds. */
  private due = false;
  private readonly nextId = monotonicFactory();
  readonly markKey: Deno.KvKey = usageMarkKey(crypto.randomUUID());
  private readonly encoder = new RecordEncoder();
  private readonly batchSize: number;
  private readonly intervalMs: number;
  private readonly onError: (error: unknown) => void;
  private readonly observer?: CounterObserver;
  private readonly refusals: RefusalRows;
  private readonly writer: BatchCommit;
  private readonly maxBacklog: number;
  private readonly closeWaitMs: number;
  /** Set when `close()` gave up on records the store did not take: flushes fail from then on. */
  private abandoned: Error | undefined;

  constructor(private readonly kv: Deno.Kv, options: UsageLedgerOptions = {}) {
    this.batchSize = Math.min(
      Math.max(Math.floor(options.batchSize ?? MAX_BATCH_RECORDS), 1),
      MAX_BATCH_RECORDS,
    );
    this.intervalMs = options.flushIntervalMs ?? 100;
    this.maxBacklog = options.maxBacklog ?? DEFAULT_MAX_BACKLOG;
    this.closeWaitMs = options.closeWaitMs ?? Infinity;
    this.onError = options.onError ?? ((error) => console.error("usage ledger:", error));
    this.observer = options.observer;
    this.writer = new BatchCommit(kv, {
      maxAttempts: Math.max(options.maxAttempts ?? 10, 1),
      retryDelayMs: options.retryDelayMs ?? 10,
      observer: this.observer,
    });
    this.observer?.attach(this);
    this.refusals = new RefusalRows(options, (rec) => this.queue(rec));
  }

  get recorded(): number {
    return this.queued;
  }

  /** Records queued and not written yet. */
  get backlog(): number {
    return this.queued - this.written;
  }

  /** More records wait for the store than the ledger keeps: the gateway takes no more requests until it can. */
  get full(): boolean {
    return this.queued - this.written >= this.maxBacklog;
  }

  /** Refusals without a valid key that were counted but not written, since the ledger started. */
  get keylessSkipped(): number {
    return this.refusals.keylessSkipped;
  }

  /**
   * Queues one record; never waits for storage and never throws. A malformed record (unparseable time,
   * negative or fractional tokens) is repaired, kept and reported to `onError`. After `close()` a record
   * is written straight away instead of on the timer.
   */
  record(rec: UsageRecord): void {
    if (this.refusals.take(rec)) this.queue(rec);
  }

  private queue(rec: UsageRecord): void {
    const keyless = isKeylessRefusal(rec);
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
      if (batch.records.length) this.seal(new Batch(expireIn));
      else this.open = new Batch(expireIn);
      batch = this.open;
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
    return this.wait(true);
  }

  /**
   * As `flush`, without writing the open batch before its time (full, or its interval passed): for waits
   * that only tidy up, which would otherwise make every commit carry the few records of the last moments.
   */
  whenWritten(): Promise<void> {
    return this.wait(false);
  }

  private wait(urgent: boolean): Promise<void> {
    const target = this.queued;
    if (this.written >= target) return Promise.resolve();
    if (this.abandoned) return Promise.reject(this.abandoned);
    const done = this.waiters.add(target, urgent);
    if (urgent) this.kick();
    return done;
  }

  /**
   * Stops the timer and flushes; with `closeWaitMs`, gives up once no batch has landed for that long, and
   * rejects naming the records and tokens not written.
   */
  async close(): Promise<void> {
    if (!this.closed) this.refusals.close();
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    const flushed = this.flush();
    if (this.closeWaitMs === Infinity) return await flushed;
    for (let landed = -1; landed !== this.written;) {
      landed = this.written;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const stalled = new Promise<false>((resolve) =>
        timer = setTimeout(() => resolve(false), this.closeWaitMs)
      );
      try {
        if (await Promise.race([flushed.then(() => true), stalled])) return;
      } finally {
        clearTimeout(timer);
      }
    }
    this.giveUp();
    throw this.abandoned;
  }

  /** The store took no batch for `closeWaitMs` while closing: the records left are given up on. */
  private giveUp(): void {
    let tokens = 0;
    for (const batch of [...this.sealed, this.open]) tokens += batch.tokens;
    this.abandoned = new Error(
      `${this.backlog} usage record(s) with ${tokens} token(s) were not written: the store took no batch ` +
        `for ${this.closeWaitMs} ms while the gateway stopped (a batch being sent may still have landed)`,
    );
    this.waiters.rejectAll(this.abandoned);
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

  /**
   * Moves the open batch, if it has records, to the end of the sealed ones and starts `next` (by default one
   * whose rows expire as the sealed one's).
   */
  private seal(next?: Batch): void {
    const batch = this.open;
    if (!batch.records.length) return;
    // The id never precedes a record's time (a scan from an instant finds all records since), nor an id
    // this ledger drew before (rows list in the order they were recorded).
    batch.seal(this.nextId(Math.max(Date.now(), batch.maxTimeMs)));
    this.sealed.push(batch);
    this.open = next ?? new Batch(batch.expireIn);
  }

  /**
   * Whether the open batch is to be written before it is full: once the interval has passed, when someone
   * waits for it, or after `close()`. Otherwise it keeps filling while the full ones are written, so under
   * load every commit carries a full batch instead of whatever arrived during the previous commit.
   */
  private openIsDue(): boolean {
    return this.open.records.length > 0 && (this.due || this.closed || this.waiters.urgent);
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
          const batch = this.sealed[0];
          const mark = { key: this.markKey, written: this.written + batch.records.length };
          await this.writer.write(
            batch,
            mark,
            (totals, versionstamp) => this.done(batch, totals, versionstamp),
          );
        } catch (error) {
          this.fail(error);
          return;
        }
        this.waiters.settle(this.written);
      }
    } finally {
      // Cleared in the same turn as the empty-queue test, so a record queued after it starts a new writer.
      this.writing = undefined;
    }
  }

  private fail(error: unknown): void {
    this.waiters.rejectAll(error);
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
   * The batch is durable. Its tokens leave `pending` in the same turn as the observer takes in the totals
   * they are part of, so no quota check in between sees them twice or not at all.
   */
  private done(batch: Batch, totals: readonly bigint[], versionstamp: string): void {
    this.sealed.shift();
    this.written += batch.records.length;
    this.observer?.committed(batch.counters, totals, versionstamp);
  }
}
