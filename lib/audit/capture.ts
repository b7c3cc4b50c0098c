/**
 * @module Recording a change in the same commit that makes it. A command runs against this wrapper of the
 * store: it remembers what the command read, and when the command commits a write to a record, it adds the
 * audit entry (that record before and after) to that very commit. So a change and its audit entry are
 * stored together or not at all, and a retried commit records nothing twice.
 */
import { type Actor, AUDIT_PREFIX, auditId, type AuditRecord, fieldChanges, secretChanges } from "./mod.ts";

/**
 * How a record appears in the trail: its target name, a view without secrets, and its secret fields, which
 * are compared but never written (the trail says only that one changed); undefined for other records.
 */
export type Describe = (
  key: Deno.KvKey,
  value: unknown,
) => { target: string; view: Record<string, unknown>; secrets?: Record<string, unknown> } | undefined;

export interface AuditEntry {
  time: () => Date;
  actor: Actor;
  action: string;
}

const keyId = (key: Deno.KvKey) => JSON.stringify(key);

export function auditingStore(kv: Deno.Kv, describe: Describe, entry: AuditEntry): Deno.Kv {
  const read = new Map<string, unknown>();
  return new Proxy(kv, {
    get(target, prop) {
      if (prop === "get") {
        return async (key: Deno.KvKey, options?: { consistency?: Deno.KvConsistencyLevel }) => {
          const found = await target.get(key, options);
          read.set(keyId(key), found.value ?? undefined);
          return found;
        };
      }
      if (prop === "atomic") return () => auditingOp(target.atomic(), read, describe, entry);
      const value = Reflect.get(target, prop);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

function auditingOp(
  op: Deno.AtomicOperation,
  read: Map<string, unknown>,
  describe: Describe,
  entry: AuditEntry,
): Deno.AtomicOperation {
  let change: AuditRecord | undefined;
  /** A rewrite that changes nothing shown or secret: the write goes ahead, but is no event for the trail. */
  let noChange = false;
  const note = (key: Deno.KvKey, after: unknown) => {
    const before = read.get(keyId(key));
    const shown = describe(key, after ?? before);
    if (!shown || change) return;
    const was = before === undefined ? undefined : describe(key, before);
    const is = after === undefined ? undefined : shown;
    const time = entry.time();
    change = {
      id: auditId(time),
      time: time.toISOString(),
      actor: entry.actor,
      action: entry.action,
      target: shown.target,
      changes: { ...fieldChanges(was?.view, is?.view), ...secretChanges(was?.secrets, is?.secrets) },
    };
    noChange = was !== undefined && is !== undefined && Object.keys(change.changes).length === 0;
  };
  const proxy: Deno.AtomicOperation = new Proxy(op, {
    get(target, prop) {
      if (prop === "commit") {
        return () => {
          if (change && !noChange) target.set([AUDIT_PREFIX, change.id], change);
          return target.commit();
        };
      }
      const value = Reflect.get(target, prop);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        if (prop === "set") note(args[0] as Deno.KvKey, args[1]);
        if (prop === "delete") note(args[0] as Deno.KvKey, undefined);
        value.apply(target, args);
        return proxy;
      };
    },
  });
  return proxy;
}
