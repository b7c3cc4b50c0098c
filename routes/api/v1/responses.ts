/** POST /api/v1/responses: the Responses API under the /api prefix. */
import { chatRoute } from "../../../lib/server/route.ts";

export default chatRoute("responses");
