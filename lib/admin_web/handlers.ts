/**
 * @module The admin endpoints: the page, its login and logout, its live feed, a JSON status and the
 * Prometheus metrics. Each one asks the gate first; nothing is read before the caller is known.
 */
import { StoreUnreachable } from "../store/link.ts";
import type { Deps } from "../deps.ts";
import type { Client } from "../http/client.ts";
import { parseAddress, type RangeList } from "../policy/ip_address.ts";
import { jsonResponse } from "../http/respond.ts";
import { readForm, sameOrigin } from "./form_post.ts";
import { adminServices, pageRefusal, refusal } from "./services.ts";
import { liveFeed } from "./live_feed.ts";
import { scrapeResponse } from "../metrics/scrape_response.ts";
import { adminPage, closedPage, htmlResponse, loginPage } from "./pages.tsx";
import { usageCharts } from "./chart_panel.tsx";

/** A login form holds one token; anything longer is not a login. */
const MAX_FORM_BYTES = 4096;

const redirect = (location: string, headers: Record<string, string> = {}) =>
  new Response(null, {
    status: 303,
    headers: { Location: location, "Cache-Control": "no-store", ...headers },
  });

/**
 * Whether the browser reached the page over https: directly, or through a proxy the admin trusts
 * (`GATEWAY_TRUST_PROXY`) that says so in `X-Forwarded-Proto`. Anyone else's header is ignored.
 */
function isHttps(request: Request, client: Client, trusted: RangeList): boolean {
  if (new URL(request.url).protocol === "https:") return true;
  const peer = client.address === undefined ? null : parseAddress(client.address);
  const proto = request.headers.get("x-forwarded-proto")?.split(",")[0].trim().toLowerCase();
  return peer !== null && trusted.has(peer) && proto === "https";
}

export async function showPage(request: Request, client: Client, deps: Deps): Promise<Response> {
  const admin = adminServices(deps);
  const access = await admin.gate.check(request, client);
  if (access !== "ok") return pageRefusal(access);
  const scope = new URL(request.url).searchParams.get("scope") ?? "all";
  return htmlResponse(
    adminPage(admin.health(), await admin.usage.view(), await usageCharts(admin.series, scope, deps)),
  );
}

export async function logIn(request: Request, client: Client, deps: Deps): Promise<Response> {
  const { gate, trustedProxies } = adminServices(deps);
  if (!gate.open) return htmlResponse(closedPage(), 403);
  if (!sameOrigin(request)) {
    return htmlResponse(loginPage("This form must be sent from the admin page."), 403);
  }
  const token = (await readForm(request, deps, MAX_FORM_BYTES))?.get("token") ?? "";
  const opened = await gate.logIn(request, client, token, isHttps(request, client, trustedProxies));
  if (opened === "unauthenticated") return htmlResponse(loginPage("That is not the admin token."), 401);
  if (typeof opened === "string" || !("setCookie" in opened)) return pageRefusal(opened);
  return redirect("/admin", { "Set-Cookie": opened.setCookie });
}

/** Ends the session in the store, not only in this browser: the cookie, kept or copied, opens nothing after. */
export async function logOut(request: Request, client: Client, deps: Deps): Promise<Response> {
  const { gate, trustedProxies } = adminServices(deps);
  if (!gate.open) return htmlResponse(closedPage(), 403);
  if (!sameOrigin(request)) {
    return htmlResponse(loginPage("This form must be sent from the admin page."), 403);
  }
  await gate.logOut(request, client);
  return redirect("/admin", { "Set-Cookie": gate.clearCookie(isHttps(request, client, trustedProxies)) });
}

export async function feed(request: Request, client: Client, deps: Deps): Promise<Response> {
  const admin = adminServices(deps);
  const access = await admin.gate.check(request, client);
  if (access !== "ok") return refusal(access);
  return liveFeed(deps, admin, admin.gate.untilSessionEnds(request, client.cut.signal));
}

export async function status(request: Request, client: Client, deps: Deps): Promise<Response> {
  const admin = adminServices(deps);
  const access = await admin.gate.check(request, client);
  if (access !== "ok") return refusal(access);
  // The usage figures are read from the store: while it does not answer they are left out (null), and the
  // health and the store's own state are answered all the same.
  const usage = await deps.view.link.bound(admin.usage.view()).catch((error) => {
    if (error instanceof StoreUnreachable) return null;
    throw error;
  });
  return jsonResponse({ health: admin.health(), store: deps.view.link.status(), usage }, 200, {
    "Cache-Control": "no-store",
  });
}

export async function metrics(request: Request, client: Client, deps: Deps): Promise<Response> {
  const access = await adminServices(deps).gate.check(request, client);
  return access === "ok" ? scrapeResponse(deps.metrics) : refusal(access);
}
