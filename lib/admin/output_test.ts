/** @module Human output formatting and record patches. */
import assert from "node:assert/strict";
import { cell, fields, table } from "./output.ts";
import { applyPatch, spreadable } from "./patch.ts";

Deno.test("cell renders absent values, lists and booleans readably", () => {
  assert.equal(cell(undefined), "-");
  assert.equal(cell([]), "-");
  assert.equal(cell(["a", "b"]), "a, b");
  assert.equal(cell(true), "yes");
  assert.equal(cell(0), "0");
});

Deno.test("table aligns columns and fields align values", () => {
  assert.equal(table(["A", "LONG"], [["xyz", 1], ["q", undefined]], "none"), "A    LONG\nxyz  1\nq    -");
  assert.equal(table(["A"], [], "Nothing."), "Nothing.");
  assert.equal(fields([["id", "k1"], ["status", "active"]]), "id:     k1\nstatus: active");
});

Deno.test("patches set, clear with null and leave undefined alone", () => {
  const record: { a: number; b?: number; c?: string } = { a: 1, b: 2, c: "x" };
  assert.deepEqual(applyPatch(record, { a: 5, b: null, c: undefined }), { a: 5, c: "x" });
  const spread = spreadable<typeof record>({ a: 5, b: null, c: undefined });
  assert.deepEqual(Object.keys(spread), ["a", "b"]);
  assert.equal(spread.b, undefined);
});
