/**
 * @module Who a request is for, as the wait queue's fairness sees it: its key, or the key's user when it has
 * one, so a user cannot take a larger share by spreading a burst over several keys. Counts what each of them
 * has in flight, kept by the server state as requests begin and end.
 */

export interface Tenant {
  key: string;
  user?: string;
}

/** The flow fairness shares slots between: the user's, else the key's. */
export function flowOf(tenant: Tenant): string {
  return tenant.user === undefined ? `key:${tenant.key}` : `user:${tenant.user}`;
}

export class TenantCounts {
  readonly #flows = new Map<string, number>();

  add(tenant: Tenant, by: 1 | -1): void {
    const flow = flowOf(tenant);
    const next = (this.#flows.get(flow) ?? 0) + by;
    if (next > 0) this.#flows.set(flow, next);
    else this.#flows.delete(flow);
  }

  of(tenant: Tenant): number {
    return this.#flows.get(flowOf(tenant)) ?? 0;
  }
}
