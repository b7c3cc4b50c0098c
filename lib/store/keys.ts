/**
 * @module Key records. Each key is written twice in one atomic commit: under its id (for the admin) and under
 * the digest of its secret (for authentication), so a lookup is one indexed read however many keys exist.
 */
import { bumpGeneration, KV_KEYS } from "./kv.ts";
import type { KeyPolicy, KeyRecord } from "./records.ts";
import { RecordError } from "./record_error.ts";
import { digestSecret, generateKeyId, generateSecret, secretHint } from "./key_secret.ts";

const byId = (id: string) => [KV_KEYS.keys, id];
const byDigest = (digest: string) => [KV_KEYS.keysByDigest, digest];

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

/** The authentication lookup: one read of the digest index. Revoked keys are absent from it. */
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

/** Applies `change` to the key and rewrites both copies; retried if a concurrent write got there first. */
async function rewriteKey(
  kv: Deno.Kv,
  id: string,
  change: (current: KeyRecord) => KeyRecord,
): Promise<KeyRecord> {
  for (let attempt = 0; attempt < 10; attempt++) {
    const entry = await kv.get<KeyRecord>(byId(id));
    if (!entry.value) throw new RecordError(`No key with id ${id}`);
    const next = change(entry.value);
    const op = kv.atomic().check(entry).set(byId(id), next);
    if (next.revokedAt) op.delete(byDigest(next.digest));
    else op.set(byDigest(next.digest), next);
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
  });
}

/** Revoking keeps the record (usage history refers to it) but removes it from authentication. */
export function revokeKey(kv: Deno.Kv, id: string, now = new Date()) {
  return rewriteKey(kv, id, (current) => {
    if (current.revokedAt) throw new RecordError(`Key ${id} is already revoked`);
    const stamp = now.toISOString();
    return { ...current, revokedAt: stamp, updatedAt: stamp };
  });
}
