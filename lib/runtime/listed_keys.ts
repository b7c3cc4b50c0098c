/**
 * @module Which of a table's names an object has, found by listing the object's keys rather than looking up
 * each of the table's: an object names a few keys, and each lookup of an absent one costs as much as one of a
 * present one. `for…in` lists what `in` finds on a plain object (keys JSON and literals make, and any a
 * polluted prototype adds), except names every object inherits without listing them.
 */

/** Each name's bit, in the table's order (at most 31 names). */
export function bitsOf(names: readonly string[]): Map<string, number> {
  return new Map(names.map((name, i) => [name, 1 << i]));
}

/** The bits of the names `value` lists; 0 for undefined. */
export function listedBits(bits: ReadonlyMap<string, number>, value: object | undefined): number {
  let listed = 0;
  for (const key in value) listed |= bits.get(key) ?? 0;
  return listed;
}
