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
  // A line of the answer's text, the most common by far, and the last line are written around their variable
  // parts: their fields and order are those the objects below would give. Their start, up to the message's
  // text, is kept while the clock reads the same millisecond: lines that came in one read share it.
  const textHead = `{"model":${JSON.stringify(ctx.alias)},"created_at":"`;
  let headAt = NaN;
  let textStart = "";
  const lineStart = () => {
    const now = ctx.now();
    if (now !== headAt) {
      headAt = now;
      textStart = `${textHead}${isoTime(now)}","message":{"role":"assistant","content":`;
    }
    return textStart;
  };
  return {
    contentType: "application/x-ndjson",
    event(event: ChatEvent): string {
      if (event.type === "delta") {
        if (!event.thinking && !event.toolCalls?.length) {
          return `${lineStart()}${JSON.stringify(event.content ?? "")}},"done":false}\n`;
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
      const duration = Math.max(1, Math.round(ctx.elapsedNs()));
      const reason = event.finishReason === "length" ? "length" : "stop";
      const counted = Number.isSafeInteger(event.promptTokens) &&
        Number.isSafeInteger(event.completionTokens);
      if (counted && Number.isFinite(duration)) {
        return `${lineStart()}""},"done":true,"done_reason":"${reason}","total_duration":${duration},` +
          `"prompt_eval_count":${event.promptTokens},"eval_count":${event.completionTokens}}\n`;
      }
      return line({
        ...head(),
        message: { role: "assistant", content: "" },
        done: true,
        done_reason: reason,
        total_duration: duration,
        prompt_eval_count: event.promptTokens,
        eval_count: event.completionTokens,
      });
    },
    error: (error: GatewayError) => line({ error: error.message }),
  };
}
