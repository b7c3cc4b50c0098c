/**
 * @module Format A streaming: `chat.completion.chunk` events as SSE. Role on the first chunk, reasoning and
 * content as separate deltas, tool calls with a stable `index`, `finish_reason` on its own chunk, the usage
 * chunk (`choices: []`) when asked, then `[DONE]`. Same `id` and `created` throughout; no `event:` lines, which
 * some SDK versions would mistake for other event types.
 */
import type { ChatEvent } from "../chat/types.ts";
import type { GatewayError } from "../errors.ts";
import type { StreamContext, StreamRenderer } from "./face.ts";
import { newToolCallId } from "./tool_call_id.ts";

const sse = (payload: unknown) => `data: ${JSON.stringify(payload)}\n\n`;
/** The first chunk's delta: the role, with empty content as OpenAI sends it. */
const ROLE = '{"role":"assistant","content":""}';

export function openaiStreamRenderer(
  ctx: StreamContext,
  errorBody: (e: GatewayError) => unknown,
): StreamRenderer {
  const base = {
    id: `chatcmpl-${ctx.requestId}`,
    object: "chat.completion.chunk",
    created: Math.floor(ctx.startedAt / 1000),
    model: ctx.model,
  };
  // Every chunk repeats the stream's fields around its delta: encoded once per stream, not once per chunk.
  const head = `data: ${JSON.stringify(base).slice(0, -1)},"choices":[{"index":0,"delta":`;
  const tail = `,"logprobs":null,"finish_reason":null}]}\n\n`;
  const chunk = (delta: Record<string, unknown>) => head + JSON.stringify(delta) + tail;
  let started = false;
  let toolIndex = 0;

  return {
    contentType: "text/event-stream",
    event(event: ChatEvent): string {
      let out = "";
      if (!started) {
        started = true;
        out += head + ROLE + tail;
      }
      if (event.type === "delta") {
        if (event.thinking) out += chunk({ reasoning_content: event.thinking });
        // Text alone, the most common chunk by far: its delta written directly, as `chunk` would write it.
        if (event.content) out += `${head}{"content":${JSON.stringify(event.content)}}${tail}`;
        if (event.toolCalls?.length) {
          out += chunk({
            tool_calls: event.toolCalls.map((call) => ({
              index: toolIndex++,
              id: call.id ?? newToolCallId(),
              type: "function",
              function: { name: call.name, arguments: JSON.stringify(call.arguments) },
            })),
          });
        }
        return out;
      }
      out += `${head}{},"logprobs":null,"finish_reason":"${
        toolIndex > 0 ? "tool_calls" : event.finishReason
      }"}]}\n\n`;
      if (ctx.includeUsage) {
        out += sse({
          ...base,
          choices: [],
          usage: {
            prompt_tokens: event.promptTokens,
            completion_tokens: event.completionTokens,
            total_tokens: event.promptTokens + event.completionTokens,
          },
        });
      }
      return out + "data: [DONE]\n\n";
    },
    error: (error) => sse(errorBody(error)),
  };
}
