/** POST /v1/chat/completions: Format A (OpenAI chat-completions). */
import { chatRoute } from "../../../lib/server/route.ts";

export default chatRoute("openai");
