/**
 * @module The OpenAI Responses API (`/v1/responses`) as a face of the one chat operation: parses `input` and
 * its settings into the internal request, renders the Response object whole or as its event stream, and
 * errors in OpenAI's `{"error":{message, type, param, code}}` shape, as on the chat-completions paths.
 */
import type { ChatResult } from "../chat/types.ts";
import type { Face, RenderContext } from "./face.ts";
import { openaiFace } from "./openai.ts";
import { parseResponses } from "./responses_request.ts";
import { responsesStreamRenderer } from "./responses_stream.ts";
import {
  callIdOf,
  functionCallItem,
  itemId,
  messageItem,
  reasoningItem,
  type ResponseFrame,
  responseObject,
  usageOf,
} from "./responses_output.ts";

function renderResult(result: ChatResult, ctx: RenderContext) {
  const frame: ResponseFrame = {
    requestId: ctx.requestId,
    createdAt: Math.floor(ctx.startedAt / 1000),
    model: result.model,
    request: ctx.request,
  };
  const status = result.finishReason === "length" ? "incomplete" : "completed";
  const output: Record<string, unknown>[] = [];
  if (result.thinking) {
    output.push(reasoningItem(itemId("rs", frame, output.length), result.thinking, "completed"));
  }
  if (result.content || !result.toolCalls.length) {
    output.push(messageItem(itemId("msg", frame, output.length), result.content, status));
  }
  const callIds = new Set<string>();
  for (const call of result.toolCalls) {
    output.push(
      functionCallItem(itemId("fc", frame, output.length), call, callIdOf(call, callIds), "completed"),
    );
  }
  return responseObject(frame, {
    status,
    output,
    usage: usageOf(result.promptTokens, result.completionTokens),
    completedAt: status === "completed" ? Math.floor(ctx.finishedAt / 1000) : undefined,
  });
}

export const responsesFace: Face = {
  name: "responses",
  parse: parseResponses,
  renderResult,
  errorBody: openaiFace.errorBody,
  streamRenderer: responsesStreamRenderer,
};
