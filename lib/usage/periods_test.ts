/** @module Quota periods: UTC day, ISO week (incl. week-years around New Year) and month, and their ends. */
import assert from "node:assert/strict";
import { isoWeek, periodEnds, periodKeys, periodStarts } from "./periods.ts";

const at = (iso: string) => new Date(iso);
const DAY_MS = 86_400_000;

Deno.test("periodKeys labels the UTC day, ISO week and month", () => {
  assert.deepEqual(periodKeys(at("2026-11-22T12:00:00Z")), {
    day: "d:2026-11-22",
    week: "w:2026-W47",
    month: "m:2026-11",
  });
  // Sunday's last millisecond is still in the week; Monday 00:00 starts the next one.
  assert.equal(periodKeys(at("2026-11-22T23:59:59.999Z")).week, "w:2026-W47");
  assert.equal(periodKeys(at("2026-11-23T00:00:00Z")).week, "w:2026-W48");
  // An offset instant is judged in UTC, not in its own zone.
  assert.equal(periodKeys(at("2026-11-23T01:00:00+02:00")).day, "d:2026-11-22");
  assert.deepEqual(periodKeys(at("2024-02-29T08:00:00Z")), {
    day: "d:2024-02-29",
    week: "w:2024-W09",
    month: "m:2024-02",
  });
});

Deno.test("ISO week-years around New Year", () => {
  const weekOf = (iso: string) => periodKeys(at(iso)).week;
  assert.equal(weekOf("2026-01-01T00:00:00Z"), "w:2026-W01"); // a Thursday
  assert.equal(weekOf("2025-12-29T00:00:00Z"), "w:2026-W01"); // its Monday, still December
  assert.equal(weekOf("2026-12-31T23:59:59.999Z"), "w:2026-W53");
  assert.equal(weekOf("2027-01-01T00:00:00Z"), "w:2026-W53");
  assert.equal(weekOf("2027-01-03T23:59:59.999Z"), "w:2026-W53"); // Sunday
  assert.equal(weekOf("2027-01-04T00:00:00Z"), "w:2027-W01"); // Monday
  assert.equal(weekOf("2024-12-29T12:00:00Z"), "w:2024-W52");
  assert.equal(weekOf("2024-12-30T00:00:00Z"), "w:2025-W01");
  assert.equal(weekOf("2021-01-03T12:00:00Z"), "w:2020-W53");
  assert.equal(weekOf("2008-12-29T12:00:00Z"), "w:2009-W01");
  // The day and month labels follow the calendar, whatever the week-year.
  const newYear = periodKeys(at("2027-01-01T00:00:00Z"));
  assert.equal(newYear.day, "d:2027-01-01");
  assert.equal(newYear.month, "m:2027-01");
  assert.equal(periodKeys(at("2024-12-30T00:00:00Z")).month, "m:2024-12");
});

Deno.test("ISO weeks are consistent day by day over a whole 400-year cycle", () => {
  const longYears = new Set<number>();
  let previous = isoWeek(at("1999-12-31T12:00:00Z"));
  for (let t = Date.UTC(2000, 0, 1, 12); t < Date.UTC(2400, 0, 1); t += DAY_MS) {
    const date = new Date(t);
    const current = isoWeek(date);
    if (date.getUTCDay() === 1) {
      const next = current.week === 1
        ? previous.year + 1 === current.year && previous.week >= 52
        : previous.year === current.year && previous.week + 1 === current.week;
      assert.ok(next, `${date.toISOString()}: ${JSON.stringify(previous)} -> ${JSON.stringify(current)}`);
    } else {
      assert.deepEqual(current, previous, date.toISOString());
    }
    if (date.getUTCMonth() === 0 && date.getUTCDate() === 4) assert.deepEqual(current.week, 1);
    if (current.week === 53) longYears.add(current.year);
    previous = current;
  }
  // The Gregorian 400-year cycle has exactly 71 ISO years with 53 weeks.
  assert.equal(longYears.size, 71);
});

Deno.test("periodEnds gives the next UTC midnight, Monday and first of the month", () => {
  assert.deepEqual(periodEnds(at("2026-11-22T12:00:00Z")), {
    day: "2026-11-23T00:00:00.000Z",
    week: "2026-11-23T00:00:00.000Z",
    month: "2026-12-01T00:00:00.000Z",
  });
  // On a Monday at 00:00 the week has just begun: it ends a full week later.
  assert.equal(periodEnds(at("2026-11-23T00:00:00Z")).week, "2026-11-30T00:00:00.000Z");
  assert.deepEqual(periodEnds(at("2026-12-31T23:59:59.999Z")), {
    day: "2027-01-01T00:00:00.000Z",
    week: "2027-01-04T00:00:00.000Z",
    month: "2027-01-01T00:00:00.000Z",
  });
  assert.equal(periodEnds(at("2024-02-29T10:00:00Z")).month, "2024-03-01T00:00:00.000Z");
  assert.equal(periodEnds(at("2023-02-28T10:00:00Z")).month, "2023-03-01T00:00:00.000Z");
});

Deno.test("a period's end is the first instant of the next period", () => {
  for (let t = Date.UTC(2026, 11, 20, 7, 30); t < Date.UTC(2027, 1, 10); t += DAY_MS / 3) {
    const date = new Date(t);
    const keys = periodKeys(date);
    for (const [name, end] of Object.entries(periodEnds(date)) as ["day" | "week" | "month", string][]) {
      const endMs = Date.parse(end);
      assert.ok(endMs > t);
      assert.equal(periodKeys(new Date(endMs - 1))[name], keys[name], `${date.toISOString()} ${name}`);
      assert.notEqual(periodKeys(new Date(endMs))[name], keys[name], `${date.toISOString()} ${name}`);
    }
  }
});

Deno.test("invalid dates are refused", () => {
  assert.throws(() => periodKeys(new Date("nope")), RangeError);
  assert.throws(() => periodEnds(new Date(NaN)), RangeError);
});

Deno.test("a period starts where the previous one ended, and the week may start in the previous month", () => {
  const tuesday = at("2026-12-01T09:00:00Z");
  assert.deepEqual(periodStarts(tuesday), {
    day: Date.UTC(2026, 11, 1),
    week: Date.UTC(2026, 10, 30),
    month: Date.UTC(2026, 11, 1),
  });
  for (let t = Date.UTC(2026, 11, 20, 7, 30); t < Date.UTC(2027, 1, 10); t += DAY_MS / 3) {
    const starts = periodStarts(new Date(t));
    const ends = periodEnds(new Date(t));
    for (const name of ["day", "week", "month"] as const) {
      assert.ok(starts[name] <= t);
      assert.equal(periodEnds(new Date(starts[name] - 1))[name], new Date(starts[name]).toISOString());
      assert.ok(Date.parse(ends[name]) > starts[name]);
    }
  }
});
