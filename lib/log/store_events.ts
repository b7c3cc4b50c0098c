/**
 * @module The store's log lines: when it stops answering and when it is back (lib/store/link.ts), a read that
 * took long (at most one line a minute, however many were slow), usage records that could not be written,
 * and the once-a-minute count of key-less refusals that were counted but not recorded.
 */
import { errorText, log } from "./mod.ts";

/** A store read slower than this is worth a line: a local one takes well under a millisecond. */
export const SLOW_STORE_MS = 500;
const SLOW_LINE_EVERY_MS = 60_000;

export function storeChanged(state: "up" | "down", message: string): void {
  if (state === "down") log.error("store.down", `store ${message}`);
  else log.info("store.up", `store ${message}`);
}

/** Slow reads since the last line, and when that was. */
let slow = { count: 0, worstMs: 0, lastLine: -Infinity };

export function storeSlow(ms: number, now = Date.now()): void {
  slow.count++;
  slow.worstMs = Math.max(slow.worstMs, ms);
  if (now - slow.lastLine < SLOW_LINE_EVERY_MS) return;
  const { count, worstMs } = slow;
  slow = { count: 0, worstMs: 0, lastLine: now };
  log.warn(
    "store.slow",
    `${count} store read(s) took over ${SLOW_STORE_MS} ms, the slowest ${Math.round(worstMs)} ms`,
    {
      count,
      worstMs: Math.round(worstMs),
    },
  );
}

export function usageWriteFailed(error: unknown): void {
  log.error("usage.write_failed", `usage records not written yet (they stay queued): ${errorText(error)}`);
}

/** The ledger's once-a-minute word on key-less refusals it only counted. */
export function keylessNotice(message: string): void {
  log.info("usage.keyless", message);
}
