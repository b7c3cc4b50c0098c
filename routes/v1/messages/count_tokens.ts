/** POST /v1/messages/count_tokens: Anthropic's token count, from the gateway's own estimate. */
import { anthropicCountTokensRoute } from "../../../lib/server/discovery_routes.ts";

export default anthropicCountTokensRoute;
