/** @module Flag value parsing: integers, reserved names and the absent / none / value distinction. */
import assert from "node:assert/strict";
import { FlagReader, positiveInt, recordName, UsageError } from "./flags.ts";

Deno.test("positiveInt accepts only whole numbers from 1", () => {
  assert.equal(positiveInt("rpm", "60"), 60);
  for (const raw of ["0", "-1", "1.5", "1e3", "", " 5", "0x10", "99999999999999999999"]) {
    assert.throws(() => positiveInt("rpm", raw), UsageError, raw);
  }
  assert.throws(() => positiveInt("rpm", "x"), { message: '--rpm must be a positive integer, got "x"' });
});

Deno.test("recordName refuses the reserved word and odd characters", () => {
  for (const ok of ["gpu-1", "alice@example.com", "team.a", "Zürich", "a:b+c_d"]) {
    assert.equal(recordName("n", ok), ok);
  }
  for (const bad of ["none", "", "-x", "a b", 'a"b', "a/b", "x".repeat(129)]) {
    assert.throws(() => recordName("n", bad), UsageError, bad);
  }
});

Deno.test("FlagReader tells absent, none and values apart", () => {
  const flags = new FlagReader({
    a: "none",
    b: "7",
    c: undefined,
    t: true,
    "no-u": true,
    text: "hi",
    json: true,
  });
  assert.equal(flags.optionalCount("a"), null);
  assert.equal(flags.optionalCount("b"), 7);
  assert.equal(flags.optionalCount("c"), undefined);
  assert.equal(flags.optionalText("text"), "hi");
  assert.equal(flags.toggle("t", "no-t"), true);
  assert.equal(flags.toggle("u", "no-u"), false);
  assert.equal(flags.toggle("v", "no-v"), undefined);
  assert.throws(() => flags.count("a"), UsageError);
  assert.throws(() => flags.required("c"), { message: "--c is required" });
  assert.equal(flags.anyGiven(), true);
  assert.equal(new FlagReader({ json: true, x: undefined }).anyGiven(), false);
});
