/**
 * @module The log line for an admin change a running gateway has taken in (the store view's reload): which
 * servers, clusters and users were added, changed or removed, and how many of the keys it had read changed
 * or went away. Names and counts only: a server's address and API key, or a key's secret, are never shown.
 */
import { log } from "./mod.ts";

interface Named {
  readonly name: string;
}

/** What the view holds, as far as this line tells of it. */
export interface ConfigSide {
  servers: ReadonlyMap<string, Named>;
  clusters: ReadonlyMap<string, Named>;
  users: ReadonlyMap<string, Named>;
  /** The keys read so far, by digest (null: no such key). */
  keys: ReadonlyMap<string, unknown>;
}

/** `+a -b ~c`: added, removed and changed names; empty when nothing changed. */
export function nameDiff(before: ReadonlyMap<string, unknown>, after: ReadonlyMap<string, unknown>): string {
  const parts: string[] = [];
  for (const [name, value] of after) {
    const old = before.get(name);
    if (old === undefined) parts.push(`+${name}`);
    else if (JSON.stringify(old) !== JSON.stringify(value)) parts.push(`~${name}`);
  }
  for (const name of before.keys()) if (!after.has(name)) parts.push(`-${name}`);
  return parts.join(" ");
}

/** Keys read before whose record changed or went away. */
function keysChanged(before: ReadonlyMap<string, unknown>, after: ReadonlyMap<string, unknown>): number {
  let changed = 0;
  for (const [digest, old] of before) {
    if (old === null) continue;
    const now = after.get(digest);
    // Not read again (beyond the reload's bound): read afresh when next presented, so not known to differ.
    if (now !== undefined && JSON.stringify(old) !== JSON.stringify(now)) changed++;
  }
  return changed;
}

export function logConfigChange(generation: bigint, before: ConfigSide, after: ConfigSide): void {
  if (!log.enabled("info")) return;
  const fields = {
    generation: Number(generation),
    servers: nameDiff(before.servers, after.servers) || undefined,
    clusters: nameDiff(before.clusters, after.clusters) || undefined,
    users: nameDiff(before.users, after.users) || undefined,
    keysChanged: keysChanged(before.keys, after.keys) || undefined,
  };
  const what = [
    fields.servers && "servers",
    fields.clusters && "clusters",
    fields.users && "users",
    fields.keysChanged && "keys",
  ].filter(Boolean).join(", ");
  // A new key is read when first presented, so its creation changes nothing this gateway had read.
  const message = what
    ? `admin change taken in: ${what}`
    : "admin change taken in (nothing read here changed)";
  log.info("config.changed", message, fields);
}
