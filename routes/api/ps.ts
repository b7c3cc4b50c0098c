/** GET /api/ps: Ollama's running models, the key's one model when some server holds it loaded. */
import { ollamaPsRoute } from "../../lib/server/discovery_routes.ts";

export default ollamaPsRoute;
