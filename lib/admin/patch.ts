/**
 * @module Partial changes to records. Updates distinguish "leave as is" from "clear", which a plain
 * `Partial<T>` cannot express, hence `null` for "clear".
 */
import { isDeepStrictEqual } from "node:util";

/** A value sets the field, `null` clears it, an absent (or undefined) field stays as it is. */
export type Patch<T> = { [K in keyof T]?: T[K] | null };

export function applyPatch<T extends object>(record: T, patch: Patch<T>): T {
  const next: Record<string, unknown> = { ...(record as Record<string, unknown>) };
  for (const [field, value] of Object.entries(patch)) {
    if (value === null) delete next[field];
    else if (value !== undefined) next[field] = value;
  }
  return next as T;
}

/** The patch as `updateKey` takes it: it spreads the patch over the record, so clearing means `undefined`. */
export function spreadable<T extends object>(patch: Patch<T>): Partial<T> {
  const out: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(patch)) {
    if (value !== undefined) out[field] = value ?? undefined;
  }
  return out as Partial<T>;
}

/**
 * Whether an update would leave `record` as it is (its `updatedAt` aside). Such an update is not written, so it
 * neither bumps the record's time nor leaves an audit entry that changed nothing.
 */
export function unchanged<T extends object>(record: T, next: T): boolean {
  const { updatedAt: _a, ...before } = record as Record<string, unknown>;
  const { updatedAt: _b, ...after } = next as Record<string, unknown>;
  return isDeepStrictEqual(before, after);
}
