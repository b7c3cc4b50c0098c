/**
 * @module Reading durations: a whole number with a unit (`90s`, `30m`, `24h`, `7d`), or `0`. Units are required
 * so that `--grace 24` cannot mean 24 seconds to one admin and 24 hours to another. `--grace` takes one alone;
 * `--expires` and `--since` take one as a time counted from now (see `time_flags.ts`).
 */
import { UsageError } from "./flags.ts";

const UNIT_MS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
/** A grace longer than this is a second key in disguise; issue one instead. */
export const MAX_GRACE_MS = 30 * UNIT_MS.d;

/** The duration `raw` spells in milliseconds, or undefined when it is not a duration. */
export function parseDuration(raw: string): number | undefined {
  const text = raw.trim();
  if (text === "0") return 0;
  const match = /^(\d{1,7})([smhd])$/.exec(text);
  return match ? Number(match[1]) * UNIT_MS[match[2]] : undefined;
}

export function durationMs(flag: string, raw: string): number {
  const ms = parseDuration(raw);
  if (ms === undefined) {
    throw new UsageError(
      `--${flag} must be a duration like 90s, 30m, 24h or 7d (or 0), got ${JSON.stringify(raw)}`,
    );
  }
  if (ms > MAX_GRACE_MS) throw new UsageError(`--${flag} must be at most 30d, got ${JSON.stringify(raw)}`);
  return ms;
}
