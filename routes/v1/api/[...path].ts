/** /v1/api/*: an Ollama client given the OpenAI base URL; told, in Ollama's error shape, the host to use. */
import { ollamaWrongBaseRoute } from "../../../lib/server/discovery_routes.ts";

export default ollamaWrongBaseRoute;
