/** POST /api/v1/messages/count_tokens: mirror of /v1/messages/count_tokens. */
import { anthropicCountTokensRoute } from "../../../../lib/server/discovery_routes.ts";

export default anthropicCountTokensRoute;
