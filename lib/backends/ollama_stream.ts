/**
 * @module Ollama's streamed answer (NDJSON) as internal events. An `{"error":…}` line, a line that is not a chat
 * object, or an end without `done` all break the stream with a GatewayError.
 */
import { BackendFailure, BadGateway } from "../errors.ts";
import type { ChatEvent, ChatRequest } from "../chat/types.ts";
import { errorMessage, type OpenResponse } from "./http_call.ts";
import { answerChars, type AnswerCheck, answerTokens } from "./answer_values.ts";
import { finishReasonOf, readOllamaObject } from "./ollama_answer.ts";
import { type EventStream, lineFraming, readEventStream, type StreamLimits } from "./stream_reading.ts";

async function* ollamaEvents(
  lines: AsyncIterable<string>,
  seen: { model?: string },
  req: ChatRequest,
  check: AnswerCheck,
): AsyncGenerator<ChatEvent> {
  let calledTools = false;
  let modelRead = false;
  // What was passed on, for an estimate should the final counts be invalid.
  let chars = 0;
  for await (const line of lines) {
    if (!line.trim()) continue;
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch {
      throw new BadGateway("The model server sent a malformed stream");
    }
    if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
      throw new BadGateway("The model server sent a malformed stream");
    }
    if ("error" in raw) {
      throw new BackendFailure(`model server reported an error: ${errorMessage(line)}`, true, true);
    }
    const chunk = readOllamaObject(raw as Record<string, unknown>, check);
    const model = (raw as { model?: unknown }).model;
    if (!modelRead && model !== undefined) {
      modelRead = true;
      seen.model = check.name(model, "model");
    }
    const { content, thinking, toolCalls } = chunk;
    calledTools ||= toolCalls.length > 0;
    if (content || thinking || toolCalls.length) {
      chars += answerChars(content, thinking, toolCalls);
      yield {
        type: "delta",
        ...(thinking ? { thinking } : {}),
        ...(content ? { content } : {}),
        ...(toolCalls.length ? { toolCalls } : {}),
      };
    }
    if (chunk.done) {
      yield {
        type: "done",
        finishReason: finishReasonOf(chunk.length, calledTools),
        ...answerTokens(chunk.promptTokens, chunk.completionTokens, req, () => chars),
      };
      return;
    }
  }
  throw new BadGateway("The model server's stream ended before the answer was complete");
}

export function readOllamaStream(
  open: OpenResponse,
  req: ChatRequest,
  check: AnswerCheck,
  limits: StreamLimits,
): Promise<EventStream> {
  return readEventStream(
    open,
    lineFraming(),
    (lines, seen) => ollamaEvents(lines, seen, req, check),
    req.model,
    limits,
  );
}
