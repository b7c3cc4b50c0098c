/** POST /admin/login: the login form; sets the session cookie. */
import type { RouteModule } from "../../lib/server/route.ts";
import { logIn } from "../../lib/admin_web/handlers.ts";

export default {
  face: "openai",
  handlers: (deps) => ({ POST: (request, client) => logIn(request, client, deps) }),
} satisfies RouteModule;
