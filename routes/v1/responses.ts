/** POST /v1/responses: the OpenAI Responses API. */
import { chatRoute } from "../../lib/server/route.ts";

export default chatRoute("responses");
