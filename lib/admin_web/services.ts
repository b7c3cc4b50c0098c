/**
 * @module The admin side's services for one running gateway: its gate, its usage summary and its health
 * view. Built once per set of deps and shared by the page, the feed, the status endpoint and the metrics.
 */
import type { Deps } from "../deps.ts";
import { RangeList } from "../policy/ip_address.ts";
import { jsonResponse } from "../http/respond.ts";
import { type AdminAccess, AdminGate } from "./admin_gate.ts";
import { UsageSummary } from "./usage_summary.ts";
import { UsageSeries } from "./usage_series.ts";
import { type HealthView, healthView } from "./views.ts";

export interface AdminServices {
  gate: AdminGate;
  usage: UsageSummary;
  series: UsageSeries;
  health(): HealthView;
  /** Proxies whose `X-Forwarded-Proto` is believed (the same list as for `X-Forwarded-For`). */
  trustedProxies: RangeList;
}

const cache = new WeakMap<Deps, AdminServices>();

export function adminServices(deps: Deps): AdminServices {
  let services = cache.get(deps);
  if (!services) {
    services = {
      gate: new AdminGate(deps.config.adminToken, deps.now),
      usage: new UsageSummary(deps.view.kv, deps.now),
      series: new UsageSeries(deps.view.kv, deps.now),
      health: () =>
        healthView(deps.view.snapshot, deps.servers.status(), deps.now(), deps.scheduler.figures()),
      trustedProxies: RangeList.lenient(deps.config.trustProxy),
    };
    cache.set(deps, services);
  }
  return services;
}

/** The JSON refusal of an admin endpoint; it says why, never what is behind it. */
export function refusal(access: Exclude<AdminAccess, "ok">): Response {
  return access === "closed"
    ? jsonResponse(
      {
        error: {
          message: "The admin endpoints are closed: GATEWAY_ADMIN_TOKEN is not set",
          code: "admin_closed",
        },
      },
      403,
    )
    : jsonResponse(
      {
        error: {
          message: "Admin token required (Authorization: Bearer, or log in at /admin)",
          code: "admin_unauthenticated",
        },
      },
      401,
      { "WWW-Authenticate": 'Bearer realm="gateway admin"' },
    );
}
