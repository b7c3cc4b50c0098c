/**
 * @module Atomic writes: an AtomicWrite's checks and mutations as one atomic operation of the local store, so
 * checks compare against the versionstamps that reads hand out and a commit answers with the local store's own
 * versionstamp. `sum`, `min` and `max` take KvU64 (LE64) values, as the public Deno KV API sends them. What the
 * local API cannot express (enqueues, which Deno's client never sends over KV Connect; V8-number sums; keys
 * suffixed with the versionstamp) is refused with a 400 rather than approximated.
 */
import { decodeKey } from "./key_codec.ts";
import {
  AtomicWriteStatus,
  BadRequest,
  decode,
  encode,
  messages,
  MutationType,
  type WireAtomicWrite,
  type WireMutation,
} from "./schema.ts";
import { decodeValue, versionstampBytes, versionstampHex } from "./value_codec.ts";

export async function atomicWrite(kv: Deno.Kv, body: Uint8Array): Promise<Uint8Array<ArrayBuffer>> {
  const write = decode<WireAtomicWrite>(messages.AtomicWrite, body);
  if (write.enqueues.length) throw new BadRequest("Enqueues are not supported by this server.");
  let result: Deno.KvCommitResult | Deno.KvCommitError;
  try {
    const op = kv.atomic();
    for (const check of write.checks) {
      const versionstamp = check.versionstamp.length ? versionstampHex(check.versionstamp) : null;
      op.check({ key: keyOf(check.key), versionstamp });
    }
    for (const mutation of write.mutations) apply(op, mutation);
    result = await op.commit();
  } catch (error) {
    // The local store refuses what denokv refuses (limits, a sum on a value that is not a KvU64) with a
    // TypeError; the protocol's answer to a bad write is a 400 with the reason.
    if (error instanceof TypeError) throw new BadRequest(error.message);
    throw error;
  }
  return encode(
    messages.AtomicWriteOutput,
    result.ok
      ? { status: AtomicWriteStatus.SUCCESS, versionstamp: versionstampBytes(result.versionstamp) }
      : { status: AtomicWriteStatus.CHECK_FAILURE },
  );
}

function apply(op: Deno.AtomicOperation, m: WireMutation): void {
  const key = keyOf(m.key);
  const expireAt = typeof m.expireAtMs === "number" ? m.expireAtMs : m.expireAtMs.toNumber();
  switch (m.mutationType) {
    case MutationType.SET: {
      if (!m.value) break;
      // The wire carries a moment, the local API a duration; an expired moment stays expired.
      const options = expireAt > 0 ? { expireIn: Math.max(0, Math.round(expireAt - Date.now())) } : undefined;
      op.set(key, decodeValue(m.value), options);
      return;
    }
    case MutationType.DELETE:
      op.delete(key);
      return;
    case MutationType.SUM:
    case MutationType.MIN:
    case MutationType.MAX: {
      if (!m.value || m.sumMin?.length || m.sumMax?.length || expireAt > 0) break;
      const value = decodeValue(m.value);
      if (!(value instanceof Deno.KvU64)) {
        throw new BadRequest("Only KvU64 (LE64) values can be summed, minimized or maximized here.");
      }
      if (m.mutationType === MutationType.SUM) op.sum(key, value.value);
      else if (m.mutationType === MutationType.MIN) op.min(key, value.value);
      else op.max(key, value.value);
      return;
    }
  }
  throw new BadRequest("Invalid mutation kind or arguments.");
}

function keyOf(bytes: Uint8Array): Deno.KvKey {
  const key = decodeKey(bytes);
  if (!key?.length) throw new BadRequest("A key is not a valid Deno KV key.");
  return key;
}
