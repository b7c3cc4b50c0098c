/** POST /api/v1/chat/completions.php: Format A, direct-file alias under the /api prefix. */
import { chatRoute } from "../../../../lib/server/route.ts";

export default chatRoute("openai");
