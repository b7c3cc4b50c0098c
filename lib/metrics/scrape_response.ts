/**
 * @module The Prometheus text as an HTTP answer, for whichever listener may show it: the metrics port (its
 * `Host` checked) and the admin page's `/metrics` (behind the admin gate). Neither decides for the other.
 */
import { jsonResponse } from "../http/respond.ts";
import type { GatewayMetrics } from "./mod.ts";

export async function scrapeResponse(metrics: GatewayMetrics | undefined): Promise<Response> {
  if (!metrics) return jsonResponse({ error: { message: "Metrics are off", code: "not_found" } }, 404);
  const { body, contentType } = await metrics.scrape();
  return new Response(body, { headers: { "Content-Type": contentType, "Cache-Control": "no-store" } });
}
