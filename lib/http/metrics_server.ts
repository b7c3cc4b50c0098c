/**
 * @module The optional metrics listener (`GATEWAY_METRICS_PORT`): only `GET /metrics`, without the admin
 * token, on its own address (loopback unless `GATEWAY_METRICS_HOST` says otherwise), so a scraper on a
 * private network needs no admin secret and the public port keeps /metrics closed to everyone else.
 */
import type { Deps } from "../deps.ts";
import { metricsText } from "../admin_web/handlers.ts";
import { jsonResponse } from "./respond.ts";

export function serveMetrics(deps: Deps): Deno.HttpServer | undefined {
  const { metricsPort, metricsHost } = deps.config;
  if (metricsPort === undefined) return undefined;
  return Deno.serve({
    port: metricsPort,
    hostname: metricsHost,
    onListen: ({ hostname, port }) => console.log(`metrics on http://${hostname}:${port}/metrics`),
  }, (request) => {
    if (new URL(request.url).pathname !== "/metrics") {
      return jsonResponse({ error: { message: "Only /metrics is served here", code: "not_found" } }, 404);
    }
    if (request.method !== "GET" && request.method !== "HEAD") {
      return jsonResponse({ error: { message: "Use GET", code: "method_not_allowed" } }, 405, {
        Allow: "GET, HEAD",
      });
    }
    return metricsText(deps);
  });
}
