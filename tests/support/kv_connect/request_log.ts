/**
 * @module What each request to the KV Connect test server touched, for tests that count a client's round trips
 * by purpose: the keys a snapshot read asked for (a range by its start), and the keys an atomic write checked
 * and changed. Bodies are kept as they came and decoded only when a test asks, so keeping them costs the
 * server nothing on its own path.
 */
import { decodeKey } from "./key_codec.ts";
import { decode, messages, type WireAtomicWrite, type WireReadRange } from "./schema.ts";

export interface LoggedRequest {
  operation: "snapshot_read" | "atomic_write";
  /** Keys read (a range: the key it starts at, or its prefix when it starts just past one). */
  reads: Deno.KvKey[];
  /** Keys an atomic write checked. */
  checks: Deno.KvKey[];
  /** Keys an atomic write set, deleted or summed. */
  writes: Deno.KvKey[];
}

/** A range's start as a key: a key itself, or a prefix followed by 0x00 (a `list` by prefix). */
function keyAt(bytes: Uint8Array): Deno.KvKey {
  return decodeKey(bytes) ?? decodeKey(bytes.subarray(0, bytes.length - 1)) ?? ["?"];
}

export function describe(operation: LoggedRequest["operation"], body: Uint8Array): LoggedRequest {
  if (operation === "snapshot_read") {
    const { ranges } = decode<{ ranges: WireReadRange[] }>(messages.SnapshotRead, body);
    return { operation, reads: ranges.map((r) => keyAt(r.start)), checks: [], writes: [] };
  }
  const write = decode<WireAtomicWrite>(messages.AtomicWrite, body);
  return {
    operation,
    reads: [],
    checks: write.checks.map((c) => keyAt(c.key)),
    writes: write.mutations.map((m) => keyAt(m.key)),
  };
}
