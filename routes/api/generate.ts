/** /api/generate: not served; an Ollama-format error naming what is (never reaches a backend). */
import { ollamaNotServedRoute } from "../../lib/discovery/mod.ts";

export default ollamaNotServedRoute;
