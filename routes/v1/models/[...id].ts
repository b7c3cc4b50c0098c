/** GET /v1/models/{id}: OpenAI's model object, for the key's model only. */
import { openaiModelRoute } from "../../../lib/discovery/mod.ts";

export default openaiModelRoute;
