/** GET /api/version: the Ollama API level the gateway speaks (no key needed). */
import { ollamaVersionRoute } from "../../lib/server/discovery_routes.ts";

export default ollamaVersionRoute;
