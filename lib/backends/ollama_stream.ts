/**
 * @module Ollama's streamed answer (NDJSON) as internal events. An `{"error":…}` line, a line that is not a chat
 * object, or an end without `done` all break the stream with a GatewayError.
 */
import { BackendFailure, BadGateway } from "../errors.ts";
import type { ChatEvent } from "../chat/types.ts";
import { errorMessage, type OpenResponse } from "./http_call.ts";
import { ChatChunkShape, finishReasonOf, toolCallsOf } from "./ollama.ts";
import { type EventStream, lineFraming, readEventStream, type StreamLimits } from "./stream_reading.ts";

async function* ollamaEvents(
  lines: AsyncIterable<string>,
  seen: { model?: string },
): AsyncGenerator<ChatEvent> {
  let calledTools = false;
  for await (const line of lines) {
    if (!line.trim()) continue;
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch {
      throw new BadGateway("The model server sent a malformed stream");
    }
    if (raw && typeof raw === "object" && "error" in raw) {
      throw new BackendFailure(`model server reported an error: ${errorMessage(line)}`, true, true);
    }
    const parsed = ChatChunkShape.safeParse(raw);
    if (!parsed.success) throw new BadGateway("The model server sent a malformed stream");
    const chunk = parsed.data;
    seen.model ??= chunk.model;
    const toolCalls = toolCallsOf(chunk);
    calledTools ||= toolCalls.length > 0;
    const { content, thinking } = chunk.message;
    if (content || thinking || toolCalls.length) {
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
        finishReason: finishReasonOf(chunk, calledTools),
        promptTokens: chunk.prompt_eval_count ?? 0,
        completionTokens: chunk.eval_count ?? 0,
      };
      return;
    }
  }
  throw new BadGateway("The model server's stream ended before the answer was complete");
}

export function readOllamaStream(
  open: OpenResponse,
  model: string,
  limits: StreamLimits,
): Promise<EventStream> {
  return readEventStream(open, lineFraming(), ollamaEvents, model, limits);
}
