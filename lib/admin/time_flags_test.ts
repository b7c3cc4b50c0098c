/** @module `--expires` and `--since` parsing: which ISO-8601 spellings pass and what instant they mean. */
import assert from "node:assert/strict";
import { isoInstant } from "./time_flags.ts";
import { UsageError } from "./flags.ts";

Deno.test("isoInstant reads ISO-8601 dates and times, UTC unless an offset is given", () => {
  assert.equal(isoInstant("expires", "2026-12-31"), "2026-12-31T00:00:00.000Z");
  assert.equal(isoInstant("expires", "2026-12-31T23:59"), "2026-12-31T23:59:00.000Z");
  assert.equal(isoInstant("expires", "2026-12-31T23:59:30.5Z"), "2026-12-31T23:59:30.500Z");
  assert.equal(isoInstant("expires", "2026-12-31T10:00:00+02:00"), "2026-12-31T08:00:00.000Z");
  assert.equal(isoInstant("expires", "2026-12-31T10:00:00-0130"), "2026-12-31T11:30:00.000Z");
  assert.equal(isoInstant("expires", "2024-02-29 12:00:00z"), "2024-02-29T12:00:00.000Z");
});

Deno.test("isoInstant rejects other spellings and impossible dates", () => {
  const bad = [
    "tomorrow",
    "",
    "12/31/2026",
    "2026-13-01",
    "2026-02-29",
    "2026-04-31",
    "2026-12-31T24:00",
    "2026-1-1",
  ];
  for (const raw of [...bad, "2026-12-31T10:00+25:00", "Dec 31 2026", "1767225600"]) {
    assert.throws(() => isoInstant("expires", raw), UsageError, raw);
  }
});
