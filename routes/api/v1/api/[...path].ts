/** /api/v1/api/*: an Ollama client given the `/api/v1` OpenAI base URL; told the host to use. */
import { ollamaWrongBaseRoute } from "../../../../lib/server/discovery_routes.ts";

export default ollamaWrongBaseRoute;
