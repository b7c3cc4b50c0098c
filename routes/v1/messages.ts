/** POST /v1/messages: Anthropic's Messages API. */
import { chatRoute } from "../../lib/server/route.ts";

export default chatRoute("anthropic");
