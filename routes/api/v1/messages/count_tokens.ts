/** POST /api/v1/messages/count_tokens: mirror of /v1/messages/count_tokens. */
import { anthropicCountTokensRoute } from "../../../../lib/discovery/mod.ts";

export default anthropicCountTokensRoute;
