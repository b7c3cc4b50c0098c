/**
 * @module The values of an OpenAI-compatible answer that whole and streamed answers share: finish reasons,
 * usage, tool-call fragments. Checked here once (see `answer_values.ts` for what happens to invalid ones).
 */
import type { FinishReason } from "../chat/types.ts";
import { type AnswerCheck, objectOf, textOf } from "./answer_values.ts";

/** What `finish_reason` may say (openapi `ChatCompletion.Choice`). */
const FINISH_REASONS = new Set(["stop", "length", "tool_calls", "content_filter", "function_call"]);

/** The finish reason, undefined while none is given; an invalid one is reported and read as a plain stop. */
export function finishOf(value: unknown, check: AnswerCheck): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === "string" && FINISH_REASONS.has(value)) return value;
  check.invalid("finish_reason", value);
  return "stop";
}

export function internalFinish(finish: string | undefined, calledTools: boolean): FinishReason {
  return calledTools ? "tool_calls" : finish === "length" ? "length" : "stop";
}

export interface Usage {
  prompt?: number;
  completion?: number;
}

/** The usage object's counts, each undefined where absent or invalid; undefined without a usage object. */
export function usageOf(value: unknown, check: AnswerCheck): Usage | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "object" || Array.isArray(value)) return check.invalid("usage", value);
  const u = value as Record<string, unknown>;
  return {
    prompt: check.count(u.prompt_tokens, "prompt_tokens"),
    completion: check.count(u.completion_tokens, "completion_tokens"),
  };
}

/** A tool call's position among the answer's calls; absent means the first, as servers that omit it mean. */
export function toolIndexOf(value: unknown, check: AnswerCheck): number {
  if (value === undefined) return 0;
  if (Number.isSafeInteger(value) && (value as number) >= 0) return value as number;
  check.invalid("tool_call_index", value);
  return 0;
}

/** A fragment of a call's name or arguments; arguments sent whole as an object are taken as their JSON. */
export function fragmentOf(value: unknown, what: string): string {
  if (typeof value === "object" && value !== null && !Array.isArray(value)) return JSON.stringify(value);
  return textOf(value, what);
}

/** A part of the answer that may be absent (a delta, a function): absent or null is empty. */
export function optionalObject(value: unknown, what: string): Record<string, unknown> {
  return value === undefined || value === null ? {} : objectOf(value, what);
}
