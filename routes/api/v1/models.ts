/** GET /api/v1/models: mirror of /v1/models. */
import { openaiModelsRoute } from "../../../lib/server/discovery_routes.ts";

export default openaiModelsRoute;
