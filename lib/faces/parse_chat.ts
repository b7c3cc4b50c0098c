/** The parse step both faces share: validate the body, then build the internal request. */
import { InvalidRequest } from "../errors.ts";
import type { ChatRequest } from "../chat/types.ts";
import { ChatBody } from "./chat_body.ts";
import { describeZodError } from "./zod_message.ts";
import { toChatRequest } from "./to_chat_request.ts";
import { narrowedByKeys } from "./narrowed_object.ts";

/** The body schema for the keys a body has (`narrowed_object.ts`). */
const chatBodyFor = narrowedByKeys(ChatBody);

export function parseChat(body: unknown): ChatRequest {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new InvalidRequest("Cannot parse request: the body must be a JSON object");
  }
  const parsed = chatBodyFor(body).safeParse(body);
  if (!parsed.success) throw new InvalidRequest(`Cannot parse request: ${describeZodError(parsed.error)}`);
  return toChatRequest(parsed.data);
}
