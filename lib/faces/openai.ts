/**
 * @module Format A: OpenAI chat-completions. Renders `chat.completion` objects and `{"error":{…}}` bodies
 * with the four keys the OpenAI SDKs expect (message, type, param, code).
 */
import type { ChatResult } from "../chat/types.ts";
import type { GatewayError } from "../errors.ts";
import type { Face, RenderContext } from "./face.ts";
import { parseChat } from "./parse_chat.ts";
import { newToolCallId } from "./tool_call_id.ts";
import { openaiStreamRenderer } from "./openai_stream.ts";

/** OpenAI's error `type` for each status class. */
function errorType(status: number): string {
  if (status === 401) return "authentication_error";
  if (status === 403) return "permission_error";
  if (status === 404) return "not_found_error";
  if (status === 429) return "rate_limit_error";
  if (status >= 500) return "api_error";
  return "invalid_request_error";
}

function errorBody(error: GatewayError) {
  return { error: { message: error.message, type: errorType(error.status), param: null, code: error.code } };
}

export const openaiFace: Face = {
  name: "openai",
  parse: parseChat,

  renderResult(result: ChatResult, ctx: RenderContext) {
    const message: Record<string, unknown> = { role: "assistant", content: result.content, refusal: null };
    if (result.thinking) message.reasoning_content = result.thinking;
    if (result.toolCalls.length) {
      message.tool_calls = result.toolCalls.map((call) => ({
        id: call.id ?? newToolCallId(),
        type: "function",
        function: { name: call.name, arguments: JSON.stringify(call.arguments) },
      }));
    }
    return {
      id: `chatcmpl-${ctx.requestId}`,
      object: "chat.completion",
      created: Math.floor(ctx.startedAt / 1000),
      model: result.model,
      choices: [{
        index: 0,
        message,
        logprobs: null,
        finish_reason: result.toolCalls.length ? "tool_calls" : result.finishReason,
      }],
      usage: {
        prompt_tokens: result.promptTokens,
        completion_tokens: result.completionTokens,
        total_tokens: result.promptTokens + result.completionTokens,
      },
    };
  },

  errorBody,
  streamRenderer: (ctx) => openaiStreamRenderer(ctx, errorBody),
};
