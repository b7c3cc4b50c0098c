/**
 * @module Anthropic's streamed message: named SSE events, as its SDKs skip any event without a name.
 * `message_start` and a `ping`, then one content block at a time (`content_block_start`, its deltas,
 * `content_block_stop`): thinking and text as they come, each tool call whole as one `input_json_delta`; then
 * `message_delta` with the stop reason and the backend's counts, and `message_stop`. `message_start` shows the
 * prompt as the gateway estimates it; `message_delta` carries the counts billed, which the SDKs take over
 * it. A stream that breaks ends with a `message_delta` of what is billed for it (the estimate of the prompt
 * and of what was delivered, as the usage record has it) and Anthropic's `error` event.
 */
import type { ChatEvent, ChatRequest, FinishReason } from "../chat/types.ts";
import { estimateTokens } from "../chat/token_estimate.ts";
import type { GatewayError } from "../errors.ts";
import type { StreamContext, StreamRenderer } from "./face.ts";
import { anthropicErrorBody } from "./anthropic_errors.ts";
import { newToolCallId } from "./tool_call_id.ts";

const sse = (event: string, payload: Record<string, unknown>) =>
  `event: ${event}\ndata: ${JSON.stringify({ type: event, ...payload })}\n\n`;

export function stopReason(toolCalls: number, finish: FinishReason): string {
  if (toolCalls > 0) return "tool_use";
  return finish === "length" ? "max_tokens" : "end_turn";
}

/** The prompt a broken stream is billed: its characters as the account counts them, estimated. */
function promptEstimate(request: ChatRequest): number {
  let chars = 0;
  for (const m of request.messages) chars += m.content.length;
  return estimateTokens(chars);
}

export function anthropicStreamRenderer(ctx: StreamContext): StreamRenderer {
  const prompt = promptEstimate(ctx.request);
  let started = false;
  /** The index of the last block started, and whether it is still open (text or thinking). */
  let index = -1;
  let open: "text" | "thinking" | undefined;
  let toolCalls = 0;
  /** Characters of the answer sent, counted as the account counts them for a broken stream. */
  let delivered = 0;

  const begin = () => {
    if (started) return "";
    started = true;
    return sse("message_start", {
      message: {
        id: `msg_${ctx.requestId}`,
        type: "message",
        role: "assistant",
        model: ctx.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: prompt, output_tokens: 0 },
      },
    }) + sse("ping", {});
  };
  const close = () => {
    if (!open) return "";
    open = undefined;
    return sse("content_block_stop", { index });
  };
  const startBlock = (block: Record<string, unknown>) =>
    sse("content_block_start", { index: ++index, content_block: block });
  const delta = (payload: Record<string, unknown>) => sse("content_block_delta", { index, delta: payload });
  const into = (kind: "text" | "thinking") => {
    if (open === kind) return "";
    const out = close() + startBlock(
      kind === "text" ? { type: "text", text: "" } : {
        type: "thinking",
        thinking: "",
        signature: "",
      },
    );
    open = kind;
    return out;
  };
  const messageDelta = (stop: string | null, input: number, output: number) =>
    sse("message_delta", {
      delta: { stop_reason: stop, stop_sequence: null },
      usage: { input_tokens: input, output_tokens: output },
    });

  return {
    contentType: "text/event-stream",
    event(event: ChatEvent): string {
      let out = begin();
      if (event.type === "delta") {
        if (event.thinking) {
          delivered += event.thinking.length;
          out += into("thinking") + delta({ type: "thinking_delta", thinking: event.thinking });
        }
        if (event.content) {
          delivered += event.content.length;
          out += into("text") + delta({ type: "text_delta", text: event.content });
        }
        for (const call of event.toolCalls ?? []) {
          const input = JSON.stringify(call.arguments);
          delivered += call.name.length + input.length;
          toolCalls++;
          out += close() +
            startBlock({ type: "tool_use", id: call.id ?? newToolCallId(), name: call.name, input: {} }) +
            delta({ type: "input_json_delta", partial_json: input }) +
            sse("content_block_stop", { index });
        }
        return out;
      }
      // Never an empty message: clients read the first block of an answer that said nothing too.
      if (index < 0) out += into("text");
      return out + close() +
        messageDelta(stopReason(toolCalls, event.finishReason), event.promptTokens, event.completionTokens) +
        sse("message_stop", {});
    },
    error(error: GatewayError): string {
      return begin() + messageDelta(null, prompt, estimateTokens(delivered)) +
        sse("error", anthropicErrorBody(error));
    },
  };
}
