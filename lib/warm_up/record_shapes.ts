/**
 * @module The warm-up's records made in the shapes of the store's own. V8 optimizes the request path for the
 * object shapes the warm-up shows it (which fields a record has, in which order); a real key or server of
 * another shape then throws that code away on the first real requests, which run slow again until it is
 * optimized anew. Before this, a gateway just started on a store whose keys and servers the admin CLI made
 * undid some thirty optimized functions on its first requests (`--trace-deopt`: "wrong map" in key shaping,
 * quotas, candidates, dispatch), because the warm-up's key carried a user and limits and its server listed
 * its fields in another order.
 *
 * So the warm-up's server of each kind copies the field order of a server of that kind in the store, and its
 * keys copy the shapes of the first keys the store lists (a few, as V8 keeps one site fast over four shapes at
 * most), beside the two the warm-up always shows: a key as `key create` makes it with no limit, and one of a
 * user with limits. Their values are the warm-up's: its model, its user, its cluster, limits it never reaches,
 * no allow-list, no expiry; what shapes a request (features, ceilings, a system prompt) is copied as it is.
 */
import type { KeyPolicy, KeyRecord, ServerRecord } from "../store/records.ts";
import { basePolicy } from "../store/records.ts";
import { KV_KEYS } from "../store/kv.ts";

/** Keys listed from the store for their shapes: the first ones, enough to see the usual few. */
const SAMPLED_KEYS = 64;
/** Key shapes warmed in all, the warm-up's two included. */
const KEY_SHAPES = 4;
const FAR_FUTURE = "9999-12-31T23:59:59.999Z";

/** What the store's records look like: a server per kind, and keys of distinct shapes. */
export interface StoreShapes {
  servers: readonly ServerRecord[];
  keys: readonly KeyRecord[];
}

export const NO_SHAPES: StoreShapes = { servers: [], keys: [] };

const shapeOf = (record: object) => Object.keys(record).join(",");

/** A server of each kind among `servers`, and the first keys of distinct shapes the store lists. */
export async function storeShapes(kv: Deno.Kv, servers: Iterable<ServerRecord>): Promise<StoreShapes> {
  const byKind = new Map<string, ServerRecord>();
  for (const server of servers) if (!byKind.has(server.kind)) byKind.set(server.kind, server);
  const keys = new Map<string, KeyRecord>();
  for await (const entry of kv.list<KeyRecord>({ prefix: [KV_KEYS.keys] }, { limit: SAMPLED_KEYS })) {
    const key = entry.value;
    const shape = shapeOf(key);
    // A revoked key is refused before its shape matters.
    if (key.revokedAt === undefined && !keys.has(shape)) keys.set(shape, key);
  }
  return { servers: [...byKind.values()], keys: [...keys.values()] };
}

/** The warm-up's server: `like`'s fields in `like`'s order, with the warm-up's values. */
export function warmUpServer(
  like: ServerRecord | undefined,
  fields: Omit<ServerRecord, "createdAt" | "updatedAt">,
): Omit<ServerRecord, "createdAt" | "updatedAt"> {
  if (!like) return fields;
  const { createdAt: _created, updatedAt: _updated, ...order } = like;
  const model = like.models[0] ? { ...like.models[0], ...fields.models[0] } : fields.models[0];
  return { ...order, ...fields, models: [model] };
}

/** The policy of a warm-up key shaped like `like`: every field it has, with values the warm-up can serve. */
function policyLike(like: KeyRecord, model: string, user: string, cluster: string): KeyPolicy {
  const {
    id: _id,
    digest: _digest,
    hint: _hint,
    createdAt: _created,
    updatedAt: _updated,
    revokedAt: _revoked,
    previous: _previous,
    rotatedAt: _rotated,
    ...policy
  } = like;
  const out: KeyPolicy = { ...policy, model, allowIps: [], allowDomains: [] };
  if (out.name !== undefined) out.name = model;
  if (out.user !== undefined) out.user = user;
  if (out.cluster !== undefined) out.cluster = cluster;
  if (out.expiresAt !== undefined) out.expiresAt = FAR_FUTURE;
  for (const limit of ["rpm", "dailyTokens", "weeklyTokens", "monthlyTokens", "maxConcurrent"] as const) {
    if (out[limit] !== undefined) out[limit] = HIGH;
  }
  return out;
}

/** Limits the warm-up never reaches. */
export const HIGH = 1_000_000_000;

/**
 * The warm-up's keys for `model`: one as `key create` makes it, one of `user` with limits, then ones shaped
 * like `likes`, at most `KEY_SHAPES` shapes in all.
 */
export function warmUpPolicies(
  likes: readonly KeyRecord[],
  model: string,
  user: string,
  cluster: string,
): KeyPolicy[] {
  const policies: KeyPolicy[] = [
    { ...basePolicy(model), name: model },
    { ...basePolicy(model), name: model, user, rpm: HIGH, dailyTokens: HIGH },
  ];
  const seen = new Set(policies.map(shapeOf));
  for (const like of likes) {
    if (policies.length >= KEY_SHAPES) break;
    const policy = policyLike(like, model, user, cluster);
    const shape = shapeOf(policy);
    if (seen.has(shape)) continue;
    seen.add(shape);
    policies.push(policy);
  }
  return policies;
}
