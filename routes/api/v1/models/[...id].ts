/** GET /api/v1/models/{id}: mirror of /v1/models/{id}. */
import { openaiModelRoute } from "../../../../lib/discovery/mod.ts";

export default openaiModelRoute;
