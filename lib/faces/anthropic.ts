/**
 * @module Anthropic's Messages API (`/v1/messages`): parses its body and renders the `message` object with
 * content blocks (thinking, text, tool_use), stop reason and usage; streams and errors are rendered by
 * `anthropic_stream.ts` and `anthropic_errors.ts`.
 */
import type { ChatRequest, ChatResult } from "../chat/types.ts";
import { InvalidRequest } from "../errors.ts";
import type { Face, RenderContext } from "./face.ts";
import { MessagesBody } from "./anthropic_body.ts";
import { toChatRequest } from "./anthropic_request.ts";
import { anthropicStreamRenderer, stopReason } from "./anthropic_stream.ts";
import { anthropicErrorBody } from "./anthropic_errors.ts";
import { describeZodError } from "./zod_message.ts";
import { newToolCallId } from "./tool_call_id.ts";

export function parseMessages(body: unknown): ChatRequest {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new InvalidRequest("Cannot parse request: the body must be a JSON object");
  }
  const parsed = MessagesBody.safeParse(body);
  if (parsed.success) return toChatRequest(parsed.data);
  const issue = parsed.error.issues[0];
  // A content block, image source, tool choice or thinking mode of a type not known here.
  if (issue.code === "invalid_union" && "options" in issue && Array.isArray(issue.options)) {
    const field = describeZodError(parsed.error).replace(/ has an invalid type or value$/, "");
    const known = issue.options.map((o) => JSON.stringify(o)).join(", ");
    throw new InvalidRequest(`Cannot parse request: ${field} must be one of ${known}`);
  }
  if (issue.code === "invalid_type" && issue.message.endsWith("received undefined")) {
    const field = describeZodError(parsed.error).replace(/ must be an? \S+$/, "");
    throw new InvalidRequest(`Cannot parse request: ${field} is required`);
  }
  throw new InvalidRequest(`Cannot parse request: ${describeZodError(parsed.error)}`);
}

/** A count_tokens body: a Messages body without the token limit, which counting needs no more than Anthropic. */
export function parseCountTokens(body: unknown): ChatRequest {
  const limited = typeof body === "object" && body !== null && !Array.isArray(body) && !("max_tokens" in body)
    ? { ...body, max_tokens: 1 }
    : body;
  return parseMessages(limited);
}

export const anthropicFace: Face = {
  name: "anthropic",
  parse: parseMessages,

  renderResult(result: ChatResult, ctx: RenderContext) {
    const content: Record<string, unknown>[] = [];
    if (result.thinking) content.push({ type: "thinking", thinking: result.thinking, signature: "" });
    // Never an empty list: clients read `content[0]` of an answer that said nothing too.
    if (result.content || (!content.length && !result.toolCalls.length)) {
      content.push({ type: "text", text: result.content });
    }
    for (const call of result.toolCalls) {
      content.push({
        type: "tool_use",
        id: call.id ?? newToolCallId(),
        name: call.name,
        input: call.arguments,
      });
    }
    return {
      id: `msg_${ctx.requestId}`,
      type: "message",
      role: "assistant",
      model: result.model,
      content,
      stop_reason: stopReason(result.toolCalls.length, result.finishReason),
      stop_sequence: null,
      usage: { input_tokens: result.promptTokens, output_tokens: result.completionTokens },
    };
  },

  errorBody: anthropicErrorBody,
  streamRenderer: anthropicStreamRenderer,
};
