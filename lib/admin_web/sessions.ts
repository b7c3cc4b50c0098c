/**
 * @module The admin page's sessions, kept in the store: `["admin_sessions", SHA-256 of the session id]`, with
 * the store's own expiry (`expireIn`) and the end time checked on every read. A session is valid while its
 * row exists, so logging out (which deletes it) ends it at once in every process and every gateway on the
 * store, and a restart does not revive one.
 *
 * In the store rather than in memory because the page is served by several processes at once: the workers of
 * `deno task start:parallel` and of `deno serve --parallel` take connections from one port, and several
 * gateways may share a store behind one address; the next request of a browser may reach any of them.
 *
 * The row is named by a digest of the id, so reading the store gives nothing to put in a cookie (the cookie
 * also needs an HMAC keyed by the admin token, see `admin_gate.ts`). Opening and ending a session write their
 * audit entry in the same commit.
 */
import { createHash } from "node:crypto";
import { AUDIT_PREFIX, type AuditRecord } from "../audit/mod.ts";

export const SESSIONS_PREFIX = "admin_sessions";
/** How long a session lasts without logging out. */
export const SESSION_MS = 12 * 60 * 60 * 1000;

interface SessionRow {
  /** Ms since the epoch. */
  expires: number;
}

const rowKey = (id: string): Deno.KvKey => [SESSIONS_PREFIX, createHash("sha256").update(id).digest("hex")];

export class AdminSessions {
  /** `kv`: what a request may wait for (bounded on a network store, so an outage fails instead of hanging). */
  constructor(private readonly kv: Deno.Kv, private readonly now: () => number) {}

  /** A new session id (256 random bits), stored with `audit` in one commit; returns the id and its end. */
  async open(audit: (id: string, expires: number) => AuditRecord): Promise<{ id: string; expires: number }> {
    const id = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");
    const expires = this.now() + SESSION_MS;
    const record = audit(id, expires);
    const done = await this.kv.atomic()
      .check({ key: rowKey(id), versionstamp: null })
      .set(rowKey(id), { expires } satisfies SessionRow, { expireIn: SESSION_MS })
      .set([AUDIT_PREFIX, record.id], record)
      .commit();
    if (!done.ok) throw new Error("a new admin session id collided with an open one");
    return { id, expires };
  }

  async active(id: string): Promise<boolean> {
    const row = await this.kv.get<SessionRow>(rowKey(id));
    return row.value !== null && row.value.expires > this.now();
  }

  /** Ends the session; `audit` is written with it only if the session was still open. */
  async end(id: string, audit: () => AuditRecord): Promise<void> {
    const row = await this.kv.get<SessionRow>(rowKey(id));
    if (row.value === null) return;
    const record = audit();
    // Checked, so two logouts of one session (two tabs) leave one entry.
    await this.kv.atomic().check(row).delete(rowKey(id)).set([AUDIT_PREFIX, record.id], record).commit();
  }
}
