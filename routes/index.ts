/** GET / and HEAD /: Ollama's liveness answer (no key needed). */
import { ollamaRootRoute } from "../lib/server/discovery_routes.ts";

export default ollamaRootRoute;
