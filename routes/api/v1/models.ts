/** GET /api/v1/models: mirror of /v1/models. */
import { openaiModelsRoute } from "../../../lib/discovery/mod.ts";

export default openaiModelsRoute;
