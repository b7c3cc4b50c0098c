/**
 * The run shared by the hostile-input properties: every generated request sent and refused with the status
 * its contract gives it, counted by path and by kind of damage, so a test can show the spread it claims.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import type { FaceError } from "./hostile_faces.ts";

/** Every kind of damage the hostile generators make; each property must have exercised them all. */
export const DAMAGE_CATEGORIES = [
  "wrong-kind",
  "bad-value",
  "bad-image",
  "deep-nesting",
  "giant-array",
  "huge-string",
  "truncated",
  "control-char",
  "invalid-utf8",
  "random-bytes",
  "trailing-junk",
  "not-json",
  "not-object",
  "content-type",
  "over-limit",
] as const;

/** What a refusal check needs of a generated request, whichever generator made it. */
export interface Refusable {
  category: string;
  label: string;
  path: string;
  expect: number;
}

/** How many requests went to each path and came with each kind of damage. */
export class RefusalSpread {
  readonly #seen = new Map<string, number>();

  add(r: Refusable): void {
    for (const name of [r.path, r.category]) this.#seen.set(name, this.of(name) + 1);
  }

  of(name: string): number {
    return this.#seen.get(name) ?? 0;
  }

  assertPaths(paths: readonly string[], min: number): void {
    for (const path of paths) assert.ok(this.of(path) >= min, `${path}: ${this.of(path)} cases`);
  }

  assertCategories(min: number): void {
    for (const c of DAMAGE_CATEGORIES) assert.ok(this.of(c) >= min, `${c}: ${this.of(c)} cases`);
  }
}

/**
 * Sends every generated request through `send` and asserts it was refused with the status it expects; a
 * shrunk failure is printed by what it was, not as bytes.
 */
export async function assertEveryRefused<R extends Refusable>(
  requests: fc.Arbitrary<R>,
  run: { seed: number; numRuns: number },
  spread: RefusalSpread,
  send: (r: R, where: string) => Promise<FaceError>,
): Promise<void> {
  const labelled = requests.map((r) =>
    Object.assign(r, {
      [fc.toStringMethod]: () => `${r.category} on ${r.path}: ${r.label} (expected ${r.expect})`,
    }) as R
  );
  await fc.assert(
    fc.asyncProperty(labelled, async (r) => {
      const where = `${r.category} on ${r.path}: ${r.label}`;
      const refusal = await send(r, where);
      assert.equal(refusal.status, r.expect, `${where}: ${refusal.message}`);
      spread.add(r);
    }),
    { seed: run.seed, numRuns: run.numRuns },
  );
}
