/**
 * @module The quota periods: UTC calendar day, ISO week (Monday to Sunday, numbered by ISO week-year) and
 * month. Counters are keyed by these labels, so the ledger writing them and the policy reading them must
 * agree to the millisecond about which period an instant falls in; nothing here looks at the local zone.
 */

export type PeriodName = "day" | "week" | "month";

export const PERIOD_NAMES: readonly PeriodName[] = ["day", "week", "month"];

/** Counter key suffixes: `d:2026-11-22`, `w:2026-W47`, `m:2026-11`. */
export type PeriodKeys = Record<PeriodName, string>;

const DAY_MS = 86_400_000;

const pad = (n: number, width = 2) => String(n).padStart(width, "0");

function startOfDay(date: Date): number {
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate());
}

/** Days since the week's Monday: 0 for Monday … 6 for Sunday. */
function weekday(date: Date): number {
  return (date.getUTCDay() + 6) % 7;
}

/**
 * ISO week-year and week number. The week belongs to the year of its Thursday, so the last days of
 * December can be in week 1 of the next year and the first days of January in week 52/53 of the previous.
 */
export function isoWeek(date: Date): { year: number; week: number } {
  const thursday = new Date(startOfDay(date) + (3 - weekday(date)) * DAY_MS);
  const year = thursday.getUTCFullYear();
  const ordinal = (thursday.getTime() - Date.UTC(year, 0, 1)) / DAY_MS;
  return { year, week: Math.floor(ordinal / 7) + 1 };
}

function assertValid(date: Date): void {
  if (Number.isNaN(date.getTime())) throw new RangeError("Cannot compute quota periods of an invalid date");
}

export function periodKeys(date: Date): PeriodKeys {
  assertValid(date);
  const year = date.getUTCFullYear();
  const month = pad(date.getUTCMonth() + 1);
  const iso = isoWeek(date);
  return {
    day: `d:${year}-${month}-${pad(date.getUTCDate())}`,
    week: `w:${iso.year}-W${pad(iso.week)}`,
    month: `m:${year}-${month}`,
  };
}

/** The instants (ISO strings) at which the periods containing `date` end and their counters start over. */
export function periodEnds(date: Date): Record<PeriodName, string> {
  assertValid(date);
  const day = startOfDay(date);
  return {
    day: new Date(day + DAY_MS).toISOString(),
    week: new Date(day + (7 - weekday(date)) * DAY_MS).toISOString(),
    month: new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1)).toISOString(),
  };
}

/** Epoch milliseconds at which the periods containing `date` began. */
export function periodStarts(date: Date): Record<PeriodName, number> {
  assertValid(date);
  const day = startOfDay(date);
  return {
    day,
    week: day - weekday(date) * DAY_MS,
    month: Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1),
  };
}
