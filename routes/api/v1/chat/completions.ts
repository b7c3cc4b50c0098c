/** POST /api/v1/chat/completions: Format A under the /api prefix. */
import { chatRoute } from "../../../../lib/http/route.ts";

export default chatRoute("openai");
