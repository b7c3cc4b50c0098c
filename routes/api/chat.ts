/** POST /api/chat: Format B on Ollama's own path (Ollama's error shape, streams unless told otherwise). */
import { chatRoute } from "../../lib/server/route.ts";

export default chatRoute("ollama_api");
