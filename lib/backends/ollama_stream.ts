/**
 * @module Ollama's streamed answer (NDJSON) as internal events. An `{"error":…}` line, a line that is not a chat
 * object, or an end without `done` all break the stream with a GatewayError.
 */
import { BackendFailure, BadGateway } from "../errors.ts";
import type { ChatDelta, ChatEvent, ChatRequest, ToolCall } from "../chat/types.ts";
import { errorMessage, type OpenResponse } from "./http_call.ts";
import { answerChars, type AnswerCheck, answerTokens } from "./answer_values.ts";
import { finishReasonOf, readOllamaObject } from "./ollama_answer.ts";
import { commonLineContent, commonNamedLine } from "./ollama_line.ts";
import {
  type EventStream,
  lineFraming,
  type PayloadDecoder,
  readEventStream,
  type StreamLimits,
} from "./stream_reading.ts";

class OllamaDecoder implements PayloadDecoder {
  model?: string;
  #calledTools = false;
  #modelRead = false;
  /** What was passed on, for an estimate should the final counts be invalid. */
  #chars = 0;

  constructor(private readonly req: ChatRequest, private readonly check: AnswerCheck) {}

  payload(line: string, out: ChatEvent[]): boolean {
    // A line of the common form gives its text (`ollama_line.ts`), and the first one its model too.
    const text = this.#modelRead ? commonLineContent(line) : this.#namedLine(line);
    if (text !== undefined) {
      if (text) {
        this.#chars += text.length;
        out.push({ type: "delta", content: text });
      }
      return false;
    }
    if (!line.trim()) return false;
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
    const chunk = readOllamaObject(raw as Record<string, unknown>, this.check);
    const model = (raw as { model?: unknown }).model;
    if (!this.#modelRead && model !== undefined) {
      this.#modelRead = true;
      this.model = this.check.name(model, "model");
    }
    this.#delta(chunk.content, chunk.thinking, chunk.toolCalls, out);
    if (!chunk.done) return false;
    const chars = this.#chars;
    out.push({
      type: "done",
      finishReason: finishReasonOf(chunk.length, this.#calledTools),
      ...answerTokens(chunk.promptTokens, chunk.completionTokens, this.req, () => chars),
    });
    return true;
  }

  /** The text of a first line of the common form, whose model is read from it; else undefined. */
  #namedLine(line: string): string | undefined {
    const named = commonNamedLine(line);
    if (named === undefined) return undefined;
    this.#modelRead = true;
    this.model = this.check.name(named.model, "model");
    return named.content;
  }

  /** What a line adds to the answer, passed on as a delta when there is any, and counted. */
  #delta(content: string, thinking: string | undefined, toolCalls: ToolCall[], out: ChatEvent[]): void {
    this.#calledTools ||= toolCalls.length > 0;
    if (!content && !thinking && !toolCalls.length) return;
    this.#chars += answerChars(content, thinking, toolCalls);
    // Text alone is made as the common line's delta is, so the response sees one shape of it.
    if (!thinking && !toolCalls.length) {
      out.push({ type: "delta", content });
      return;
    }
    const delta: ChatDelta = { type: "delta" };
    if (thinking) delta.thinking = thinking;
    if (content) delta.content = content;
    if (toolCalls.length) delta.toolCalls = toolCalls;
    out.push(delta);
  }

  end(): void {
    throw new BadGateway("The model server's stream ended before the answer was complete");
  }
}

export function readOllamaStream(
  open: OpenResponse,
  req: ChatRequest,
  check: AnswerCheck,
  limits: StreamLimits,
): Promise<EventStream> {
  return readEventStream(open, lineFraming(), new OllamaDecoder(req, check), req.model, limits);
}
