/**
 * @module Format B: Ollama-native chat. Renders the final chat object with the serving node's model alias,
 * and errors as `{"error":{message, type:"proxy_error", code}}` (spec §7).
 */
import type { ChatResult } from "../chat/types.ts";
import { isoTime } from "../runtime/iso_time_format.ts";
import type { GatewayError } from "../errors.ts";
import type { Face, RenderContext } from "./face.ts";
import { parseChat } from "./parse_chat.ts";
import { newToolCallId } from "./tool_call_id.ts";
import { ollamaStreamRenderer } from "./ollama_stream.ts";

export const ollamaFace: Face = {
  name: "ollama",
  parse: parseChat,

  renderResult(result: ChatResult, ctx: RenderContext) {
    const message: Record<string, unknown> = { role: "assistant", content: result.content };
    if (result.thinking) message.thinking = result.thinking;
    if (result.toolCalls.length) {
      message.tool_calls = result.toolCalls.map((call, index) => ({
        id: call.id ?? newToolCallId(),
        function: { index, name: call.name, arguments: call.arguments },
      }));
    }
    return {
      model: ctx.alias,
      created_at: isoTime(ctx.finishedAt),
      message,
      done: true,
      // Ollama itself never reports "tool_calls"; a turn that calls tools ends with "stop".
      done_reason: result.finishReason === "length" ? "length" : "stop",
      total_duration: ctx.durationNs,
      prompt_eval_count: result.promptTokens,
      eval_count: result.completionTokens,
    };
  },

  errorBody(error: GatewayError) {
    return { error: { message: error.message, type: "proxy_error", code: error.code } };
  },

  streamRenderer: ollamaStreamRenderer,
};
