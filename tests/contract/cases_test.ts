/**
 * Keeps CASES complete: an adapter added to BACKENDS without a contract case would otherwise be routed to
 * untested. Its own module because cases.ts is imported by every contract test file, and a test there would
 * run once per importer.
 */
import assert from "node:assert/strict";
import { BACKENDS } from "../../lib/backends/mod.ts";
import { CASES } from "./cases.ts";

Deno.test("every adapter in BACKENDS has a contract case", () => {
  assert.deepEqual(
    [...new Set(CASES.map((c) => c.kind))].sort(),
    Object.keys(BACKENDS).sort(),
  );
});
