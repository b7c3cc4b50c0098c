/**
 * @module Anthropic's Messages API (`/v1/messages`): parses its body and renders the `message` object with
 * content blocks (thinking, text, tool_use), stop reason and usage; streams and errors are rendered by
 * `anthropic_stream.ts` and `anthropic_errors.ts`.
 */
import { z } from "zod";
import type { ChatRequest, ChatResult } from "../chat/types.ts";
import { InvalidRequest } from "../errors.ts";
import type { Face, RenderContext } from "./face.ts";
import { MessagesBody, UNSERVED_BLOCKS } from "./anthropic_body.ts";
import { toChatRequest } from "./anthropic_request.ts";
import { anthropicStreamRenderer, stopReason } from "./anthropic_stream.ts";
import { anthropicErrorBody } from "./anthropic_errors.ts";
import { describeZodError, fieldPath } from "./zod_message.ts";
import { newToolCallId } from "./tool_call_id.ts";

type Issue = z.core.$ZodIssue;

/** The issue a union's failure comes down to: the branch that got furthest into the value, as zod_message.ts. */
function innermost(issue: Issue): Issue {
  if (issue.code !== "invalid_union" || !issue.errors.length) return issue;
  const deepest = issue.errors.map((branch) => branch[0]).filter((first) => first?.path.length)
    .sort((a, b) => b.path.length - a.path.length)[0];
  return deepest ? innermost({ ...deepest, path: [...issue.path, ...deepest.path] }) : issue;
}

/** What the body holds at `path`, undefined where nothing is. */
function valueAt(body: unknown, path: readonly PropertyKey[]): unknown {
  let node = body;
  for (const part of path) {
    if (typeof node !== "object" || node === null) return undefined;
    node = (node as Record<PropertyKey, unknown>)[part];
  }
  return node;
}

/** zod's one sentence, except for a missing field and a block or mode type not known here, said plainly. */
function describe(error: z.ZodError, body: unknown): string {
  const issue = innermost(error.issues[0]);
  const field = JSON.stringify(fieldPath(issue.path));
  if (valueAt(body, issue.path) === undefined) return `${field} is required`;
  if (issue.code === "invalid_union" && "options" in issue && Array.isArray(issue.options)) {
    // The block types read only to be refused by name are no choice to offer.
    const served = issue.options.filter((o) => !(UNSERVED_BLOCKS as readonly unknown[]).includes(o));
    return `${field} must be one of ${served.map((o) => JSON.stringify(o)).join(", ")}`;
  }
  return describeZodError(error);
}

export function parseMessages(body: unknown): ChatRequest {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new InvalidRequest("Cannot parse request: the body must be a JSON object");
  }
  const parsed = MessagesBody.safeParse(body);
  if (!parsed.success) throw new InvalidRequest(`Cannot parse request: ${describe(parsed.error, body)}`);
  return toChatRequest(parsed.data);
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
