/** /api/pull: not served; an Ollama-format error naming what is (never reaches a backend). */
import { ollamaNotServedRoute } from "../../lib/server/discovery_routes.ts";

export default ollamaNotServedRoute;
