/**
 * @module Flags that name an instant: `--expires` (a key's end) and `--since` (where a listing starts). Each takes
 * an ISO-8601 date or date-time, or a duration counted from now (`--expires 30d`: thirty days from now;
 * `--since 24h`: the last day), the way `--grace` takes one. An expiry that has already passed is refused: it
 * would create or leave a key that cannot be used, which `key revoke` says plainly. Only ISO-8601 is accepted,
 * not whatever `Date.parse` tolerates, and a time without an offset is taken as UTC: quota periods are UTC
 * too, and the admin's local zone should not silently shift when a key dies.
 */
import { parseDuration } from "./duration.ts";
import { UsageError } from "./flags.ts";

const ISO_8601 =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(Z|([+-])(\d{2}):?(\d{2}))?)?$/i;

/** Returns the instant as a full ISO string (`toISOString()`), or throws naming `flag`. */
export function isoInstant(flag: string, raw: string): string {
  const invalid = () =>
    new UsageError(
      `--${flag} must be an ISO-8601 date or date-time (e.g. 2026-12-31 or 2026-12-31T23:59:00Z), got ${
        JSON.stringify(raw)
      }`,
    );
  const m = ISO_8601.exec(raw.trim());
  if (!m) throw invalid();
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map((part) => Number(part ?? 0));
  const millis = Number((m[7] ?? "0").padEnd(3, "0").slice(0, 3));
  const local = Date.UTC(year, month - 1, day, hour, minute, second, millis);
  const check = new Date(local);
  // Date.UTC rolls 2026-02-30 over into March; a date that does not round-trip does not exist.
  const exists = check.getUTCFullYear() === year && check.getUTCMonth() === month - 1 &&
    check.getUTCDate() === day && check.getUTCHours() === hour && check.getUTCMinutes() === minute &&
    check.getUTCSeconds() === second;
  const offsetHours = Number(m[10] ?? 0);
  const offsetMinutes = Number(m[11] ?? 0);
  if (!exists || offsetHours > 23 || offsetMinutes > 59) throw invalid();
  const sign = m[9] === "-" ? -1 : 1;
  return new Date(local - sign * (offsetHours * 60 + offsetMinutes) * 60_000).toISOString();
}

/** Further out than this a duration is a typo; the instant would not fit the ISO form either. */
const MAX_OFFSET_MS = 36_500 * 86_400_000;

function instant(flag: string, raw: string, now: Date, direction: 1 | -1): string {
  const ms = parseDuration(raw);
  if (ms === undefined) {
    try {
      return isoInstant(flag, raw);
    } catch (error) {
      if (!(error instanceof UsageError)) throw error;
      throw new UsageError(
        `--${flag} must be a duration like 30m, 24h or 7d, or an ISO-8601 date or date-time ` +
          `(e.g. 2026-12-31 or 2026-12-31T23:59:00Z), got ${JSON.stringify(raw)}`,
      );
    }
  }
  if (ms > MAX_OFFSET_MS) {
    throw new UsageError(`--${flag} must be at most 36500d, got ${JSON.stringify(raw)}`);
  }
  return new Date(now.getTime() + direction * ms).toISOString();
}

/** `--expires`: when a key stops working; refused unless it is still ahead of `now`. */
export function expiryInstant(flag: string, raw: string, now: Date): string {
  const at = instant(flag, raw, now, 1);
  if (Date.parse(at) <= now.getTime()) {
    throw new UsageError(
      `--${flag} ${raw} is not in the future (it is now ${now.toISOString()}); give a later time or a ` +
        `duration such as 30d (to end a key now, use key revoke)`,
    );
  }
  return at;
}

/** `--since`: the earliest instant a listing shows. */
export function sinceInstant(flag: string, raw: string, now: Date): Date {
  return new Date(instant(flag, raw, now, -1));
}
