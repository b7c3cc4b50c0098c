/**
 * @module undici checks its invariants with `node:assert`'s `assert(value)` dozens of times per call, and the
 * runtime's `assert` takes its arguments as a rest array: some 8 KB of garbage per backend call, an eighth of
 * all a whole answer allocates (measured with V8's sampling heap profiler under the bench's load). undici is
 * given an `assert` that checks the value first and hands only a failure to the runtime's own, so a failing
 * invariant throws exactly what it threw before.
 *
 * It is given through `Module._load`, the hook CommonJS `require` goes through (the one Node's APM tools
 * use), for requires from undici's own files only, and it must run before undici is loaded: `upstream.ts`
 * imports this module first. `undiciAssertHooked()` says whether undici took it; a test fails loudly if an
 * upgrade of the runtime or of undici bypasses the hook.
 */
import Module from "node:module";
import runtimeAssert from "node:assert";

let hooked = 0;

function assert(value: unknown, _message?: string | Error): void {
  if (!value) Reflect.apply(runtimeAssert, undefined, arguments);
}
// Everything else (`assert.strictEqual`, `AssertionError`, …) is the runtime's own.
Object.setPrototypeOf(assert, runtimeAssert);

type Load = (request: string, parent: { filename?: string } | undefined, isMain: boolean) => unknown;
const modules = Module as unknown as { _load: Load };
const load = modules._load;
modules._load = function (this: unknown, request, parent, isMain) {
  if ((request === "node:assert" || request === "assert") && parent?.filename?.includes("/undici/")) {
    hooked++;
    return assert;
  }
  return Reflect.apply(load, this, [request, parent, isMain]);
};

/** How many of undici's modules took this `assert`. */
export const undiciAssertHooked = () => hooked;
