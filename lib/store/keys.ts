/**
 * @module Key records. Each key is written twice in one atomic commit: under its id (for the admin) and under
 * the digest of its secret (for authentication), so a lookup is one indexed read however many keys exist.
 * During a rotation's grace period the record is written a third time, under the previous secret's digest,
 * so the old secret is found by that same one read; the record says until when it may be used.
 */
import { bumpGeneration, KV_KEYS } from "./kv.ts";
import type { KeyPolicy, KeyRecord, PreviousSecret } from "./records.ts";
import { RecordError } from "./record_error.ts";
import { digestSecret, generateKeyId, generateSecret, secretHint } from "./key_secret.ts";

const byId = (id: string) => [KV_KEYS.keys, id];
export const byDigest = (digest: string): Deno.KvKey => [KV_KEYS.keysByDigest, digest];

/** Creates a key; the returned secret is the only copy that will ever exist. */
export async function createKey(
  kv: Deno.Kv,
  policy: KeyPolicy,
  now = new Date(),
): Promise<{ record: KeyRecord; secret: string }> {
  const secret = generateSecret();
  const stamp = now.toISOString();
  const record: KeyRecord = {
    ...policy,
    id: generateKeyId(),
    digest: await digestSecret(secret),
    hint: secretHint(secret),
    createdAt: stamp,
    updatedAt: stamp,
  };
  const op = kv.atomic()
    .check({ key: byId(record.id), versionstamp: null })
    .check({ key: byDigest(record.digest), versionstamp: null })
    .set(byId(record.id), record)
    .set(byDigest(record.digest), record);
  const res = await bumpGeneration(op).commit();
  if (!res.ok) throw new RecordError("Key id collision; try again");
  return { record, secret };
}

/**
 * The authentication lookup: one read of the digest index. Revoked keys are absent from it; a previous secret
 * is present until KV expires it, so the caller checks `secretValid` (the store's expiry is not exact).
 */
export async function findKeyByDigest(kv: Deno.Kv, digest: string): Promise<KeyRecord | null> {
  return (await kv.get<KeyRecord>(byDigest(digest))).value;
}

export async function getKey(kv: Deno.Kv, id: string): Promise<KeyRecord> {
  const entry = await kv.get<KeyRecord>(byId(id));
  if (!entry.value) throw new RecordError(`No key with id ${id}`);
  return entry.value;
}

export async function listKeys(kv: Deno.Kv): Promise<KeyRecord[]> {
  const out: KeyRecord[] = [];
  for await (const entry of kv.list<KeyRecord>({ prefix: [KV_KEYS.keys] })) out.push(entry.value);
  return out;
}

/** Whether `digest` may still authenticate as `key` at `nowMs`: its current secret, or a previous one in grace. */
export function secretValid(key: KeyRecord, digest: string, nowMs: number): boolean {
  if (key.digest === digest) return true;
  const previous = key.previous;
  return previous !== undefined && previous.digest === digest && nowMs < Date.parse(previous.validUntil);
}

/** The store drops an old digest entry a while after its grace ends; until then `secretValid` refuses it. */
const EXPIRY_MARGIN_MS = 24 * 60 * 60 * 1000;

/**
 * Writes `next` under its id and its digests, and deletes the digests `current` had that `next` gives up, so
 * the index holds exactly the secrets that may authenticate (a revoked key: none).
 */
function writeKey(
  op: Deno.AtomicOperation,
  current: KeyRecord | undefined,
  next: KeyRecord,
  now: Date,
): Deno.AtomicOperation {
  op.set(byId(next.id), next);
  const keep = new Set<string>();
  if (!next.revokedAt) {
    keep.add(next.digest);
    op.set(byDigest(next.digest), next);
    if (next.previous) {
      keep.add(next.previous.digest);
      const left = Date.parse(next.previous.validUntil) - now.getTime();
      op.set(byDigest(next.previous.digest), next, { expireIn: Math.max(0, left) + EXPIRY_MARGIN_MS });
    }
  }
  for (const digest of [current?.digest, current?.previous?.digest]) {
    if (digest !== undefined && !keep.has(digest)) op.delete(byDigest(digest));
  }
  return op;
}

/** A previous secret whose grace is over is forgotten at the next write. */
function withoutEndedGrace(key: KeyRecord, now: Date): KeyRecord {
  if (!key.previous || Date.parse(key.previous.validUntil) > now.getTime()) return key;
  const { previous: _ended, ...rest } = key;
  return rest;
}

/** Applies `change` to the key and rewrites every copy; retried if a concurrent write got there first. */
async function rewriteKey(
  kv: Deno.Kv,
  id: string,
  change: (current: KeyRecord) => KeyRecord,
  now: Date,
  extra?: (op: Deno.AtomicOperation, next: KeyRecord) => void,
): Promise<KeyRecord> {
  for (let attempt = 0; attempt < 10; attempt++) {
    const entry = await kv.get<KeyRecord>(byId(id));
    if (!entry.value) throw new RecordError(`No key with id ${id}`);
    const next = withoutEndedGrace(change(entry.value), now);
    const op = writeKey(kv.atomic().check(entry), entry.value, next, now);
    extra?.(op, next);
    if ((await bumpGeneration(op).commit()).ok) return next;
  }
  throw new RecordError(`Key ${id} is being changed concurrently; try again`);
}

export function updateKey(kv: Deno.Kv, id: string, patch: Partial<KeyPolicy>, now = new Date()) {
  return rewriteKey(kv, id, (current) => {
    if (current.revokedAt) throw new RecordError(`Key ${id} is revoked and cannot be changed`);
    const next: KeyRecord = { ...current, ...patch, updatedAt: now.toISOString() };
    // A cleared setting is removed, not kept as an explicit undefined.
    for (const [field, value] of Object.entries(next)) {
      if (value === undefined) delete next[field as keyof KeyRecord];
    }
    return next;
  }, now);
}

/** Revoking keeps the record (usage history refers to it) but removes it from authentication. */
export function revokeKey(kv: Deno.Kv, id: string, now = new Date()) {
  return rewriteKey(kv, id, (current) => {
    if (current.revokedAt) throw new RecordError(`Key ${id} is already revoked`);
    const stamp = now.toISOString();
    return { ...current, revokedAt: stamp, updatedAt: stamp };
  }, now);
}

/**
 * Issues a new secret for the same key (same id, policy, counters and usage history). The replaced secret
 * keeps working for `graceMs` (none when 0); an earlier previous secret still in its grace ends now, since a
 * key has at most two secrets.
 */
export async function rotateKey(
  kv: Deno.Kv,
  id: string,
  graceMs: number,
  now = new Date(),
): Promise<{ record: KeyRecord; secret: string }> {
  const secret = generateSecret();
  const digest = await digestSecret(secret);
  const stamp = now.toISOString();
  const record = await rewriteKey(
    kv,
    id,
    (current) => {
      if (current.revokedAt) throw new RecordError(`Key ${id} is revoked and cannot be rotated`);
      const previous: PreviousSecret | undefined = graceMs > 0
        ? {
          digest: current.digest,
          hint: current.hint,
          validUntil: new Date(now.getTime() + graceMs).toISOString(),
        }
        : undefined;
      const { previous: _replaced, ...rest } = current;
      return {
        ...rest,
        digest,
        hint: secretHint(secret),
        rotatedAt: stamp,
        updatedAt: stamp,
        ...(previous ? { previous } : {}),
      };
    },
    now,
    (op) => op.check({ key: byDigest(digest), versionstamp: null }),
  );
  return { record, secret };
}
