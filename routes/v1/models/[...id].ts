/** GET /v1/models/{id}: OpenAI's model object, for the key's model only. */
import { openaiModelRoute } from "../../../lib/server/discovery_routes.ts";

export default openaiModelRoute;
