import assert from "node:assert/strict";
import { undiciAssertHooked } from "./undici_assert.ts";
import "./upstream.ts";

Deno.test("undici loads with the cheap assert (if this fails, the runtime's Module._load no longer reaches undici's requires: remove the hook or find the new one)", () => {
  assert.ok(undiciAssertHooked() > 0, "no undici module took the hooked assert");
});

Deno.test("the cheap assert fails as the runtime's own does", async () => {
  const Module = (await import("node:module")).default as unknown as {
    _load: (r: string, p: { filename: string }, m: boolean) => (v: unknown, m?: string) => void;
  };
  const cheap = Module._load("node:assert", { filename: "/x/node_modules/undici/lib/a.js" }, false);
  assert.doesNotThrow(() => cheap(1));
  assert.throws(() => cheap(0, "broken invariant"), { name: "AssertionError", message: "broken invariant" });
  assert.throws(() => cheap(false), { name: "AssertionError" });
  assert.equal(typeof (cheap as unknown as { strictEqual: unknown }).strictEqual, "function");
});
