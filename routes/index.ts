/** GET / and HEAD /: Ollama's liveness answer (no key needed). */
import { ollamaRootRoute } from "../lib/discovery/mod.ts";

export default ollamaRootRoute;
