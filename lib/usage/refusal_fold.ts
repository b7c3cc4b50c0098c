/**
 * @module Refusals of one key, folded. A client that keeps sending what its key refuses (a page on a wrong
 * origin, a spent quota, a rate limit) would otherwise write a row per request, as fast as it can send them.
 * The first few refusals of each key in a minute become rows of their own; the rest of that minute are counted
 * per key, reason and wire format and written, once the minute is over, as one row that says how many it
 * stands for (`count`). A flood therefore writes a bounded number of rows a minute, and every refusal is still counted.
 */
import type { UsageRecord } from "./types.ts";

const MINUTE_MS = 60_000;

/** Rows of their own per key and minute, by default; the folded rows come on top, one per reason and format. */
export const DEFAULT_REFUSALS_PER_MINUTE = 5;

export function isKeyedRefusal(rec: UsageRecord): boolean {
  return rec.keyId !== undefined && rec.status === "rejected";
}

export class RefusalFold {
  #windowStart = -Infinity;
  /** Rows of their own taken this minute, by key id. */
  #rows = new Map<string, number>();
  /** The refusals being counted this minute, by key, reason and format: the row each becomes. */
  #folded = new Map<string, UsageRecord & { count: number }>();
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly perMinute: number,
    /** Takes a folded row once its minute is over (or at `close`). */
    private readonly emit: (rec: UsageRecord) => void,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether this keyed refusal becomes a row as it is; when not, it is counted in its minute's folded row. */
  take(rec: UsageRecord): boolean {
    const now = this.now();
    if (now - this.#windowStart >= MINUTE_MS) this.#roll(now);
    const keyId = rec.keyId!;
    const rows = this.#rows.get(keyId) ?? 0;
    if (rows < this.perMinute) {
      this.#rows.set(keyId, rows + 1);
      return true;
    }
    const id = `${keyId}\u0000${
      rec.errorCode ?? ""
    }\u0000${rec.httpStatus}\u0000${rec.format}\u0000${rec.stream}`;
    const folded = this.#folded.get(id);
    if (folded) folded.count++;
    else {
      // The first folded refusal stands for the rest: same key, reason, status, format and streaming.
      this.#folded.set(id, { ...rec, count: 1 });
      this.#arm(now);
    }
    return false;
  }

  /** Writes the minute still open (at shutdown). */
  close(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#roll(this.now());
  }

  #arm(now: number): void {
    if (this.#timer !== undefined) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#roll(this.now());
    }, Math.max(this.#windowStart + MINUTE_MS - now, 0));
    // Folded rows must not keep a finished process alive; shutdown writes them through `close`.
    Deno.unrefTimer(this.#timer);
  }

  #roll(now: number): void {
    const folded = [...this.#folded.values()];
    this.#folded.clear();
    this.#rows.clear();
    this.#windowStart = now;
    for (const rec of folded) {
      if (rec.count === 1) delete (rec as UsageRecord).count;
      this.emit(rec);
    }
  }
}
