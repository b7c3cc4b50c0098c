import assert from "node:assert/strict";
import { Residency } from "./residency.ts";

const idle = () => false;

Deno.test("a model sent again stays the most recent, and the least recent is pushed out", () => {
  const r = new Residency();
  r.probed(["a", "b"], idle);
  r.sent("a");
  r.sent("a");
  r.sent("c");
  assert.deepEqual(r.list(), ["a:latest", "c:latest"]);
  r.sent("c");
  r.sent("b");
  assert.deepEqual(r.list(), ["c:latest", "b:latest"]);
});

Deno.test("after a probe, the model sent last is moved to the end again", () => {
  const r = new Residency();
  r.probed(["a", "b"], idle);
  r.sent("c");
  // The probe lists c first: sending c again must make it the most recent, so that a is pushed out, not c.
  r.probed(["c", "a"], idle);
  r.sent("c");
  r.sent("b");
  assert.deepEqual(r.list(), ["c:latest", "b:latest"]);
});
