/** POST /api/show: Ollama's model details; capabilities follow the key's policy. */
import { ollamaShowRoute } from "../../lib/discovery/mod.ts";

export default ollamaShowRoute;
