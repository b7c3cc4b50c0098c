/**
 * @module Refusals that carry no valid key: anyone who can reach the port can send them, as fast as they
 * like, so writing a row for each would let an anonymous flood grow the store without bound. Only the first
 * few of each minute become rows, and those rows expire; the rest are counted and reported once a minute.
 * Metrics still count every one of them.
 */
import type { UsageRecord } from "./types.ts";

const MINUTE_MS = 60_000;

/** How long a key-less refusal's row is kept: long enough to look into last week's noise. */
export const KEYLESS_ROW_TTL_MS = 7 * 86_400_000;

/** Rows per minute kept by default. */
export const DEFAULT_KEYLESS_PER_MINUTE = 10;

export function isKeylessRefusal(rec: UsageRecord): boolean {
  return rec.keyId === undefined && rec.status === "rejected";
}

export class KeylessBudget {
  #windowStart = -Infinity;
  #used = 0;
  #skipped = 0;
  #skippedTotal = 0;

  constructor(
    private readonly perMinute: number,
    /** Told, when a minute with skipped refusals is over, how many were skipped in it. */
    private readonly onSkipped: (count: number) => void,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether this refusal may become a row; counts it when not. */
  take(): boolean {
    const now = this.now();
    if (now - this.#windowStart >= MINUTE_MS) this.#roll(now);
    if (this.#used < this.perMinute) {
      this.#used++;
      return true;
    }
    this.#skipped++;
    this.#skippedTotal++;
    return false;
  }

  /** Key-less refusals not written since the process started. */
  get skipped(): number {
    return this.#skippedTotal;
  }

  /** Reports a minute still open (at shutdown); its skipped refusals are not reported twice. */
  close(): void {
    this.#roll(this.now());
  }

  #roll(now: number): void {
    if (this.#skipped > 0) this.onSkipped(this.#skipped);
    this.#windowStart = now;
    this.#used = 0;
    this.#skipped = 0;
  }
}
