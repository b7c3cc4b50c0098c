/**
 * @module Reading the ISO-8601 form of `--expires` and `--since`. Only ISO-8601 is accepted, not whatever
 * `Date.parse` tolerates, and a time without an offset is taken as UTC: quota periods are UTC too, and the
 * admin's local zone should not silently shift when a key dies.
 */
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
