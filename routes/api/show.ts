/** POST /api/show: Ollama's model details; capabilities follow the key's policy. */
import { ollamaShowRoute } from "../../lib/server/discovery_routes.ts";

export default ollamaShowRoute;
