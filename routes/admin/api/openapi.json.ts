/** GET /admin/api/openapi.json: the admin HTTP API's OpenAPI document, for holders of the admin token. */
import type { RouteModule } from "../../../lib/server/route.ts";
import { openApiDocument } from "../../../lib/admin_web/http_api.ts";

export default {
  face: "openai",
  handlers: (deps) => ({ GET: (request, client) => openApiDocument(request, client, deps) }),
} satisfies RouteModule;
