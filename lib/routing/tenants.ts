/**
 * @module Who a request is for, as the wait queue's fairness sees it: its key, or the key's user when it has
 * one, so a user cannot take a larger share by spreading a burst over several keys. Counts what each of them
 * has in flight, kept by the server state as requests begin and end.
 */

export interface Tenant {
  key: string;
  user?: string;
  /** The flow fairness shares slots between: the user's, else the key's (see `tenantOf`). */
  flow?: string;
}

export function flowOf(tenant: Tenant): string {
  return tenant.flow ?? (tenant.user === undefined ? `key:${tenant.key}` : `user:${tenant.user}`);
}

/** One tenant per key record, its flow named once: nothing is made per request. */
const tenants = new WeakMap<object, Tenant>();

export function tenantOf(key: { id: string; user?: string }): Tenant {
  let tenant = tenants.get(key);
  if (!tenant) {
    const base = { key: key.id, user: key.user };
    tenants.set(key, tenant = { ...base, flow: flowOf(base) });
  }
  return tenant;
}

/**
 * Requests in flight (or promised a slot) per flow, over every model: a key serves one model, and a user with
 * keys on several is held to one share of them all.
 */
export class TenantCounts {
  readonly #counts = new Map<string, number>();

  add(tenant: Tenant, by: 1 | -1): void {
    const flow = flowOf(tenant);
    const next = (this.#counts.get(flow) ?? 0) + by;
    if (next > 0) this.#counts.set(flow, next);
    else this.#counts.delete(flow);
  }

  of(tenant: Tenant): number {
    return this.#counts.get(flowOf(tenant)) ?? 0;
  }
}
