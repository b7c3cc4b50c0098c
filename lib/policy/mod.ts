/**
 * @module Policy: what an authenticated key may do right now. Cheap refusals come first so they never spend
 * a counter.
 */
import { KeyExpired } from "../errors.ts";
import type { KeyRecord } from "../store/records.ts";

export function enforcePolicy(key: KeyRecord, now: number): void {
  if (key.expiresAt !== undefined && Date.parse(key.expiresAt) <= now) throw new KeyExpired(key.expiresAt);
}
