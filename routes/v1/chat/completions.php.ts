/** POST /v1/chat/completions.php: Format A, direct-file alias. */
import { chatRoute } from "../../../lib/server/route.ts";

export default chatRoute("openai");
