/** GET /admin: the admin page, or its login form. */
import type { RouteModule } from "../../lib/server/route.ts";
import { showPage } from "../../lib/admin_web/handlers.ts";

export default {
  face: "openai",
  handlers: (deps) => ({ GET: (request, client) => showPage(request, client, deps) }),
} satisfies RouteModule;
