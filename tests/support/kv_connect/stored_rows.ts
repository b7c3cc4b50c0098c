/**
 * @module What a local Deno KV file holds, read beside Deno KV with node:sqlite: each entry's key and value
 * bytes exactly as Deno wrote them, and its expiry. Tests use it to hold the server's codecs to Deno's own
 * encodings, and to see what a write's `expireIn` became. (The layout is denokv's SQLite backend's `kv` table.)
 */
import { DatabaseSync } from "node:sqlite";

export interface StoredRow {
  key: Uint8Array;
  value: Uint8Array;
  encoding: number;
  /** -1 for a value that does not expire. */
  expirationMs: number;
}

export function storedRows(path: string): StoredRow[] {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    const rows = db.prepare("SELECT k, v, v_encoding, expiration_ms FROM kv ORDER BY k").all();
    return rows.map((row) => ({
      key: new Uint8Array(row.k as Uint8Array),
      value: new Uint8Array(row.v as Uint8Array),
      encoding: Number(row.v_encoding),
      expirationMs: Number(row.expiration_ms),
    }));
  } finally {
    db.close();
  }
}
