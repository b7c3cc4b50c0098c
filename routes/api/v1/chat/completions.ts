/** POST /api/v1/chat/completions: Format A under the /api prefix. */
import { chatRoute } from "../../../../lib/server/route.ts";

export default chatRoute("openai");
