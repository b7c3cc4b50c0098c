/** POST /api/v1/messages: Anthropic's Messages API under the /api prefix. */
import { chatRoute } from "../../../lib/server/route.ts";

export default chatRoute("anthropic");
