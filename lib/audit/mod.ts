/**
 * @module The audit trail: one record per change made through the admin CLI, page or HTTP API, stored under
 * ["audit", ulid] so the store lists them in time order. Records hold the changed fields before and after,
 * taken from the records' printable views, which never contain a secret or a digest. A secret field (a
 * server's API key) is recorded only as set, cleared or changed, never with its value.
 *
 * Besides changes, the trail holds the admin page's logins and logouts (`admin.login`, `admin.logout`) and
 * failed attempts at the admin token (`admin.login_failed`), one entry per address and minute with counts.
 */
import { monotonicFactory } from "ulid";

export const AUDIT_PREFIX = "audit";

const nextId = monotonicFactory();

/** A new entry's id: ordered by `time`, and unique within the process even for equal times. */
export function auditId(time: Date): string {
  return nextId(time.getTime());
}

/**
 * Where a change came from: the CLI on the store, a page session (a tag derived from its cookie, and the
 * address), or the admin HTTP API (the caller's address), which the CLI with `--gateway` uses.
 */
export interface Actor {
  kind: "cli" | "page" | "api";
  session?: string;
  address?: string;
}

export interface FieldChange {
  before?: unknown;
  after?: unknown;
}

export interface AuditRecord {
  id: string;
  time: string;
  actor: Actor;
  /** `noun.verb`, e.g. `key.rotate`. */
  action: string;
  target: string;
  changes: Record<string, FieldChange>;
}

/** Bookkeeping stamps change on every write and say nothing the record's time does not. */
const IGNORED = new Set(["createdAt", "updatedAt"]);

export function fieldChanges(before = {} as Record<string, unknown>, after = {} as Record<string, unknown>) {
  const changes: Record<string, FieldChange> = {};
  for (const field of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (IGNORED.has(field)) continue;
    const [b, a] = [before[field], after[field]];
    if (JSON.stringify(b) === JSON.stringify(a)) continue;
    changes[field] = { ...(b === undefined ? {} : { before: b }), ...(a === undefined ? {} : { after: a }) };
  }
  return changes;
}

/**
 * How secret fields changed, as markers instead of values: `{after: "set"}` for a new one, `{before: "set"}`
 * for a cleared one, `{before: "set", after: "changed"}` for a replaced one; nothing for an unchanged one.
 */
export function secretChanges(before: Record<string, unknown> = {}, after: Record<string, unknown> = {}) {
  const changes: Record<string, FieldChange> = {};
  for (const field of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const [b, a] = [before[field], after[field]];
    if (b === a) continue;
    if (b === undefined) changes[field] = { after: "set" };
    else if (a === undefined) changes[field] = { before: "set" };
    else changes[field] = { before: "set", after: "changed" };
  }
  return changes;
}

/** Newest first, at most `limit`, none before `since`. */
export async function listAudit(kv: Deno.Kv, options: { since?: Date; limit?: number } = {}) {
  const out: AuditRecord[] = [];
  const since = options.since?.getTime() ?? -Infinity;
  for await (const entry of kv.list<AuditRecord>({ prefix: [AUDIT_PREFIX] }, { reverse: true })) {
    if (Date.parse(entry.value.time) < since) break;
    out.push(entry.value);
    if (out.length >= (options.limit ?? 100)) break;
  }
  return out;
}

/** `field: before → after` pairs on one line, for the CLI table and the page. */
export function changesText(changes: Record<string, FieldChange>): string {
  const show = (v: unknown) => v === undefined ? "–" : typeof v === "string" ? v : JSON.stringify(v);
  return Object.entries(changes).map(([field, c]) => `${field}: ${show(c.before)} → ${show(c.after)}`)
    .join("; ");
}
