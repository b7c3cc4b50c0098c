/** GET /metrics: Prometheus text, for admins (bearer token or session). */
import type { RouteModule } from "../lib/server/route.ts";
import { metrics } from "../lib/admin_web/handlers.ts";

export default {
  face: "openai",
  handlers: (deps) => ({ GET: (request, client) => metrics(request, client, deps) }),
} satisfies RouteModule;
