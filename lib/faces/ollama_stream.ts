/**
 * @module Format B streaming: NDJSON lines as Ollama writes them. Success lines never carry an `error` key
 * (Ollama's client treats any line with one as a failure); a broken stream ends with one `{"error":"…"}` line
 * and no `done`, exactly as Ollama itself ends one, so the client raises the message.
 */
import type { ChatEvent } from "../chat/types.ts";
import { isoTime } from "../runtime/iso_time_format.ts";
import type { GatewayError } from "../errors.ts";
import type { StreamContext, StreamRenderer } from "./face.ts";
import { newToolCallId } from "./tool_call_id.ts";

const line = (payload: unknown) => JSON.stringify(payload) + "\n";

export function ollamaStreamRenderer(ctx: StreamContext): StreamRenderer {
  let toolIndex = 0;
  const head = () => ({ model: ctx.alias, created_at: isoTime(ctx.now()) });
  // A delta of text alone, the most common line by far, is written around its one variable part: its fields
  // and their order are those the object below would give.
  const textHead = `{"model":${JSON.stringify(ctx.alias)},"created_at":"`;
  return {
    contentType: "application/x-ndjson",
    event(event: ChatEvent): string {
      if (event.type === "delta") {
        if (!event.thinking && !event.toolCalls?.length) {
          return `${textHead}${isoTime(ctx.now())}","message":{"role":"assistant","content":${
            JSON.stringify(event.content ?? "")
          }},"done":false}\n`;
        }
        const message: Record<string, unknown> = { role: "assistant", content: event.content ?? "" };
        if (event.thinking) message.thinking = event.thinking;
        if (event.toolCalls?.length) {
          message.tool_calls = event.toolCalls.map((call) => ({
            id: call.id ?? newToolCallId(),
            function: { index: toolIndex++, name: call.name, arguments: call.arguments },
          }));
        }
        return line({ ...head(), message, done: false });
      }
      return line({
        ...head(),
        message: { role: "assistant", content: "" },
        done: true,
        done_reason: event.finishReason === "length" ? "length" : "stop",
        total_duration: Math.max(1, Math.round(ctx.elapsedNs())),
        prompt_eval_count: event.promptTokens,
        eval_count: event.completionTokens,
      });
    },
    error: (error: GatewayError) => line({ error: error.message }),
  };
}
