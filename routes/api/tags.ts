/** GET /api/tags: Ollama's model list, the key's one model. */
import { ollamaTagsRoute } from "../../lib/discovery/mod.ts";

export default ollamaTagsRoute;
