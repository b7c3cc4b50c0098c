/**
 * @module What a request can cost, as a token quota's reservation counts it: its prompt, estimated from the
 * shaped request before any backend saw it, and the output it may produce. The estimate is settled to the
 * backend's real count when the request ends, so it only has to be close; it leans high where the text alone
 * says too little (chat templates add tokens to every message, an image takes hundreds).
 */
import type { ChatRequest } from "../chat/types.ts";
import type { KeyRecord } from "../store/records.ts";

/** About four characters a token, as `estimateTokens` bills text whose count the backend never sent. */
const CHARS_PER_TOKEN = 4;
/** Role markers and separators the chat template wraps around each message. */
const TOKENS_PER_MESSAGE = 4;
/** The template's opening of the answer. */
const REPLY_TOKENS = 3;
/** Vision models take 256 (Gemma 3) to 576 (LLaVA) tokens an image, some more for large ones. */
const TOKENS_PER_IMAGE = 768;

export function promptEstimate(request: ChatRequest): number {
  let chars = 0;
  let images = 0;
  for (const m of request.messages) {
    chars += m.content.length + (m.thinking?.length ?? 0);
    for (const call of m.toolCalls ?? []) chars += call.name.length + JSON.stringify(call.arguments).length;
    images += m.images?.length ?? 0;
  }
  // Tool definitions are written into the prompt by the backend's template.
  if (request.tools) chars += JSON.stringify(request.tools).length;
  return Math.ceil(chars / CHARS_PER_TOKEN) + TOKENS_PER_MESSAGE * request.messages.length + REPLY_TOKENS +
    TOKENS_PER_IMAGE * images;
}

/**
 * The most output the request may produce as asked: its own `max_tokens` / `num_predict` within the key's
 * ceiling. Undefined when neither bounds it; a value of 0 or less asks a backend for no bound at all.
 */
export function askedOutput(request: ChatRequest, key: KeyRecord): number | undefined {
  const asked = request.options.numPredict;
  if (asked === undefined || asked <= 0) return key.maxPredict;
  return key.maxPredict === undefined ? asked : Math.min(asked, key.maxPredict);
}
