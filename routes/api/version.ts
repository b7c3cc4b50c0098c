/** GET /api/version: the Ollama API level the gateway speaks (no key needed). */
import { ollamaVersionRoute } from "../../lib/discovery/mod.ts";

export default ollamaVersionRoute;
