/**
 * Anthropic's `POST /v1/messages/count_tokens`, answered from the gateway's own estimate, marked as such
 * (`"estimated": true`): no backend is asked (the servers' tokenizers are behind chat calls only), and the
 * request costs no rate-limit slot, no tokens and leaves no usage record, like the model list. The body is
 * parsed and shaped for the key as a chat would be (its system prompt counts, tools the key may not use do
 * not), then every character the model would read (messages, reasoning sent back, tool calls, tool
 * definitions) counts at four to a token, the rule by which the gateway bills a stream cut before its counts.
 */
import { estimateTokens } from "../chat/token_estimate.ts";
import type { ChatRequest } from "../chat/types.ts";
import type { Deps } from "../deps.ts";
import { FACES, parseCountTokens } from "../faces/mod.ts";
import { readJsonBody } from "../http/read_body.ts";
import { errorResponse, jsonResponse } from "../http/respond.ts";
import type { Client } from "../http/client.ts";
import { shapeForKey } from "../shape/mod.ts";
import { discover } from "./access.ts";

function promptChars(request: ChatRequest): number {
  let chars = 0;
  for (const m of request.messages) {
    chars += m.content.length + (m.thinking?.length ?? 0);
    for (const call of m.toolCalls ?? []) chars += call.name.length + JSON.stringify(call.arguments).length;
  }
  for (const tool of request.tools ?? []) chars += JSON.stringify(tool).length;
  return chars;
}

export async function countTokens(request: Request, client: Client, deps: Deps): Promise<Response> {
  try {
    const { key } = await discover(request, client, deps);
    const shaped = shapeForKey(parseCountTokens(await readJsonBody(request, deps.config)), key);
    return jsonResponse({ input_tokens: estimateTokens(promptChars(shaped)), estimated: true });
  } catch (error) {
    return errorResponse(FACES.anthropic, error);
  }
}
