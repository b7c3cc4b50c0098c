/**
 * @module What the usage ledger (`ledger.ts`) can be told: batch size and flush interval, retries, the
 * key-less refusal budget, the backlog bound and how long a shutdown waits for a store that does not answer.
 */
import type { CounterObserver } from "./live_totals.ts";

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
  /**
   * Refusals of one key per minute written as rows of their own (default 5); the rest of the minute are
   * written as one row per reason with their `count`.
   */
  refusalsPerMinute?: number;
  /** Told once a minute how many key-less refusals were not written. Default: console.warn. */
  onNotice?: (message: string) => void;
  /** Records queued and not yet written beyond which `full` is true (default 100,000). */
  maxBacklog?: number;
  /**
   * How long `close()` waits with no batch landing before it gives up on the records left (default: no
   * bound; a network store's gateway sets one, since its client waits for an unreachable store forever).
   */
  closeWaitMs?: number;
}

/** Records waiting for the store, at most: some tens of MB, and minutes of an outage at a busy gateway. */
export const DEFAULT_MAX_BACKLOG = 100_000;
