import assert from "node:assert/strict";
import fc from "fast-check";
import { isoTime, isoTimeMs } from "./iso_time_format.ts";

const MAX = 8.64e15;

Deno.test("isoTime writes what toISOString writes, across days, years and the Date range", () => {
  fc.assert(
    fc.property(
      fc.oneof(fc.integer({ min: -MAX, max: MAX }), fc.double({ min: -MAX, max: MAX, noNaN: true })),
      fc.array(fc.integer({ min: -200_000_000, max: 200_000_000 }), { maxLength: 8 }),
      (start, steps) => {
        // Steps from one instant reach the same day (the cached date) and the days around it.
        for (const ms of [start, ...steps.map((step) => start + step)]) {
          if (Math.abs(Math.trunc(ms)) > MAX) continue;
          assert.equal(isoTime(ms), new Date(ms).toISOString(), `at ${ms}`);
        }
      },
    ),
    { numRuns: 2_000 },
  );
});

Deno.test("isoTime at the edges of a day and of the Date range", () => {
  const day = Date.UTC(2026, 10, 24);
  for (const ms of [day - 1, day, day + 1, day + 86_399_999, day + 86_400_000, 0, -1, MAX, -MAX, 1.9, -1.9]) {
    assert.equal(isoTime(ms), new Date(ms).toISOString(), `at ${ms}`);
  }
});

Deno.test("isoTime refuses what a Date cannot hold, as toISOString does", () => {
  for (const ms of [NaN, Infinity, -Infinity, MAX + 1, -MAX - 1]) {
    assert.throws(() => isoTime(ms), RangeError);
  }
});

Deno.test("isoTimeMs reads back any ISO text as Date.parse does, the last one written included", () => {
  const day = Date.UTC(2026, 11, 2, 1, 2, 3, 4);
  for (const ms of [day, day + 1, day, 0, -62_198_755_200_000, 253_402_300_799_999, 8.64e15]) {
    const text = isoTime(ms);
    assert.equal(isoTimeMs(text), ms);
    assert.equal(isoTimeMs(new Date(ms - 7).toISOString()), ms - 7);
  }
  for (const text of ["", "not a time", "2026-13-01T00:00:00.000Z"]) {
    assert.equal(isoTimeMs(text), Date.parse(text));
  }
  // The same instant twice gives the same text; another instant in between does not change either.
  assert.equal(isoTime(day), isoTime(day + 0.9));
  assert.notEqual(isoTime(day + 1), isoTime(day));
});
