/**
 * @module The admin side's services for one running gateway: its gate, its usage summary and its health
 * view. Built once per set of deps and shared by the page, the feed, the status endpoint and the metrics.
 */
import type { Deps } from "../deps.ts";
import { RangeList } from "../policy/ip_address.ts";
import { jsonResponse } from "../http/respond.ts";
import { type AdminAccess, AdminGate } from "./admin_gate.ts";
import { closedPage, htmlResponse, loginPage } from "./pages.tsx";
import { UsageSummary } from "./usage_summary.ts";
import { UsageSeries } from "./usage_series.ts";
import type { HealthView } from "./shared/views.ts";
import { healthView } from "./health_view.ts";

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
    const trustedProxies = RangeList.lenient(deps.config.trustProxy);
    services = {
      gate: new AdminGate({
        token: deps.config.adminToken,
        now: deps.now,
        kv: deps.view.link.wrap(deps.view.kv),
        trustedProxies,
        countFailure: (via, reason) => deps.metrics?.adminAuthFailure(via, reason),
      }),
      usage: new UsageSummary(deps.view.kv, deps.now),
      series: new UsageSeries(deps.view.kv, deps.now),
      health: () =>
        healthView(deps.view.snapshot, deps.servers.status(), deps.now(), deps.scheduler.figures()),
      trustedProxies,
    };
    cache.set(deps, services);
  }
  return services;
}

/** Writes what the admin side still holds (the last counts of failed logins); for a stopping gateway. */
export async function closeAdminServices(deps: Deps): Promise<void> {
  await cache.get(deps)?.gate.close();
}

/** The answer to an address that must wait before its next attempt at the admin token is checked. */
function throttledHeaders(retryAfterS: number): Record<string, string> {
  return { "Retry-After": String(retryAfterS), "Cache-Control": "no-store" };
}

/** The admin page's refusal: the closed page, or the login form (with why, when throttled). */
export function pageRefusal(access: Exclude<AdminAccess, "ok">): Response {
  if (access === "closed") return htmlResponse(closedPage(), 403);
  if (access === "unauthenticated") return htmlResponse(loginPage(), 401);
  return htmlResponse(
    loginPage(`Too many wrong tokens from your address; try again in ${access.retryAfterS} s.`),
    429,
    throttledHeaders(access.retryAfterS),
  );
}

/** The JSON refusal of an admin endpoint; it says why, never what is behind it. */
export function refusal(access: Exclude<AdminAccess, "ok">): Response {
  if (typeof access === "object") {
    return jsonResponse(
      {
        error: {
          message: `Too many wrong admin tokens from this address; try again in ${access.retryAfterS} s`,
          code: "admin_throttled",
        },
      },
      429,
      throttledHeaders(access.retryAfterS),
    );
  }
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
