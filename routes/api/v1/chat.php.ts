/** POST /api/v1/chat.php: Format B under the /api prefix. */
import { chatRoute } from "../../../lib/server/route.ts";

export default chatRoute("ollama");
