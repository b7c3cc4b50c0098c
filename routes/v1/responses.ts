/** POST /v1/responses: the OpenAI Responses API. */
import { chatRoute } from "../../lib/http/route.ts";

export default chatRoute("responses");
