/** GET /admin/feed: the live feed of the admin page (Server-Sent Events). */
import type { RouteModule } from "../../lib/server/route.ts";
import { feed } from "../../lib/admin_web/handlers.ts";

export default {
  face: "openai",
  handlers: (deps) => ({ GET: (request, client) => feed(request, client, deps) }),
} satisfies RouteModule;
