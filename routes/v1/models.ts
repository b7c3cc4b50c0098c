/** GET /v1/models: OpenAI's model list, the key's one model. */
import { openaiModelsRoute } from "../../lib/discovery/mod.ts";

export default openaiModelsRoute;
