/** POST /v1/chat.php: Format B (Ollama-native chat). */
import { chatRoute } from "../../lib/server/route.ts";

export default chatRoute("ollama");
