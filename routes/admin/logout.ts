/** POST /admin/logout: ends the session. */
import type { RouteModule } from "../../lib/server/route.ts";
import { logOut } from "../../lib/admin_web/handlers.ts";

export default {
  face: "openai",
  handlers: (deps) => ({ POST: (request, client) => logOut(request, client, deps) }),
} satisfies RouteModule;
