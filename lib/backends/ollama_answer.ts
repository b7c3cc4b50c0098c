/**
 * @module One Ollama chat object (the whole answer, or one line of a stream) read into checked values.
 * Ollama omits every metric that is zero, so an absent count is 0; a count that is present but invalid is
 * reported and left undefined, for the caller to estimate.
 */
import type { FinishReason, ToolCall } from "../chat/types.ts";
import { type AnswerCheck, listOf, objectOf, textOf, toolArguments, toolName } from "./answer_values.ts";

/** What `done_reason` may say (api/types.go); "" when the connection closed. */
const DONE_REASONS = new Set(["stop", "length", "load", "unload", ""]);

export interface OllamaObject {
  content: string;
  thinking?: string;
  toolCalls: ToolCall[];
  done: boolean;
  /** Read on the final object only, where Ollama puts the metrics. */
  length?: boolean;
  promptTokens?: number;
  completionTokens?: number;
  totalDurationNs?: number;
}

function toolCallOf(raw: unknown, check: AnswerCheck): ToolCall {
  const call = objectOf(raw, "a tool call");
  const fn = objectOf(call.function, "a tool call function");
  const id = check.name(call.id, "tool_call_id");
  return { ...(id ? { id } : {}), name: toolName(fn.name), arguments: toolArguments(fn.arguments) };
}

/** Reads a JSON object without an `error` key; `whole` for a non-streamed answer, which is final anyway. */
export function readOllamaObject(
  raw: Record<string, unknown>,
  check: AnswerCheck,
  whole = false,
): OllamaObject {
  const message = objectOf(raw.message, "a message");
  const thinking = check.reasoning(message.thinking);
  const calls = listOf(message.tool_calls, "tool calls");
  const out: OllamaObject = {
    content: textOf(message.content, "message content"),
    toolCalls: calls.length ? calls.map((c) => toolCallOf(c, check)) : [],
    done: raw.done === true,
  };
  if (thinking) out.thinking = thinking;
  if (!out.done && !whole) return out;
  const reason = raw.done_reason;
  if (reason !== undefined && !(typeof reason === "string" && DONE_REASONS.has(reason))) {
    check.invalid("finish_reason", reason);
  }
  out.length = reason === "length";
  out.promptTokens = raw.prompt_eval_count === undefined
    ? 0
    : check.count(raw.prompt_eval_count, "prompt_tokens");
  out.completionTokens = raw.eval_count === undefined ? 0 : check.count(raw.eval_count, "completion_tokens");
  out.totalDurationNs = check.duration(raw.total_duration);
  return out;
}

export function finishReasonOf(length: boolean | undefined, calledTools: boolean): FinishReason {
  return calledTools ? "tool_calls" : length ? "length" : "stop";
}
