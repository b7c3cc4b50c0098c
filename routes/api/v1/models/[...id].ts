/** GET /api/v1/models/{id}: mirror of /v1/models/{id}. */
import { openaiModelRoute } from "../../../../lib/server/discovery_routes.ts";

export default openaiModelRoute;
