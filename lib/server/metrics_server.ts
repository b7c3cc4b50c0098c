/**
 * @module The optional metrics listener (`GATEWAY_METRICS_PORT`): only `GET /metrics`, without the admin
 * token, on its own address (loopback unless `GATEWAY_METRICS_HOST` says otherwise), so a scraper on a
 * private network needs no admin secret and the public port keeps /metrics closed to everyone else. Only the
 * `Host` names `lib/http/metrics_host.ts` accepts are answered (421 otherwise), so a web page cannot read it
 * through DNS rebinding.
 */
import type { Deps } from "../deps.ts";
import { scrapeResponse } from "../metrics/scrape_response.ts";
import { jsonResponse } from "../http/respond.ts";
import { listen, type Listening } from "./listener.ts";
import { log } from "../log/mod.ts";
import { hostCheck } from "../http/metrics_host.ts";

/** A scraper or two, not a crowd. */
const METRICS_CONNECTIONS = 16;

export function serveMetrics(deps: Deps): Listening | undefined {
  const { metricsPort, metricsHost, metricsHostnames, headTimeoutMs, keepAliveTimeoutMs } = deps.config;
  if (metricsPort === undefined) return undefined;
  // The address it is bound to may be a name too; scrapers then send it.
  const acceptsHost = hostCheck([...metricsHostnames, metricsHost]);
  // The gateway's own listener here too: an accept error on this port must not end the process either.
  const listening = listen({
    port: metricsPort,
    hostname: metricsHost,
    limits: { headTimeoutMs, keepAliveTimeoutMs, maxConnections: METRICS_CONNECTIONS },
  }, (request) => {
    if (!acceptsHost(request.headers.get("host"))) {
      return jsonResponse({
        error: {
          message: "This host name is not served here; list it in GATEWAY_METRICS_HOSTNAMES",
          code: "misdirected_request",
        },
      }, 421);
    }
    if (new URL(request.url).pathname !== "/metrics") {
      return jsonResponse({ error: { message: "Only /metrics is served here", code: "not_found" } }, 404);
    }
    if (request.method !== "GET" && request.method !== "HEAD") {
      return jsonResponse({ error: { message: "Use GET", code: "method_not_allowed" } }, 405, {
        Allow: "GET, HEAD",
      });
    }
    return scrapeResponse(deps.metrics);
  });
  const address = `http://${listening.addr.hostname}:${listening.addr.port}/metrics`;
  log.info("metrics.start", `metrics on ${address}`, { address });
  return listening;
}
