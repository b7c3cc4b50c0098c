/** GET /admin/status: server health and usage as JSON. */
import type { RouteModule } from "../../lib/server/route.ts";
import { status } from "../../lib/admin_web/handlers.ts";

export default {
  face: "openai",
  handlers: (deps) => ({ GET: (request, client) => status(request, client, deps) }),
} satisfies RouteModule;
