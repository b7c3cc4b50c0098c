/** POST /admin/api/commands: runs one admin command line (the admin HTTP API; docs/admin-api.openapi.json). */
import type { RouteModule } from "../../../lib/server/route.ts";
import { runCommandRequest } from "../../../lib/admin_web/http_api.ts";

export default {
  face: "openai",
  handlers: (deps) => ({ POST: (request, client) => runCommandRequest(request, client, deps) }),
} satisfies RouteModule;
