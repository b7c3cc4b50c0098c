/** GET /api/tags: Ollama's model list, the key's one model. */
import { ollamaTagsRoute } from "../../lib/server/discovery_routes.ts";

export default ollamaTagsRoute;
