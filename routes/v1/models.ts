/** GET /v1/models: OpenAI's model list, the key's one model. */
import { openaiModelsRoute } from "../../lib/server/discovery_routes.ts";

export default openaiModelsRoute;
