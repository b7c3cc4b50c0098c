/**
 * @module An OpenAI-compatible server's streamed answer (SSE) as internal events. Tool calls arrive there in
 * fragments (arguments split across chunks); they are reassembled and passed on whole, at the finish.
 */
import { BackendFailure, BadGateway } from "../errors.ts";
import type { ChatDelta, ChatEvent, ChatRequest, ToolCall } from "../chat/types.ts";
import { errorMessage, type OpenResponse } from "./http_call.ts";
import {
  type AnswerCheck,
  answerTokens,
  listOf,
  objectOf,
  textOf,
  toolArguments,
  toolName,
} from "./answer_values.ts";
import {
  finishOf,
  fragmentOf,
  internalFinish,
  optionalObject,
  toolIndexOf,
  type Usage,
  usageOf,
} from "./openai_answer.ts";
import {
  type EventStream,
  type PayloadDecoder,
  readEventStream,
  sseFraming,
  type StreamLimits,
} from "./stream_reading.ts";

interface PartialCall {
  id?: string;
  name: string;
  args: string;
}

function addFragments(parts: unknown[], calls: Map<number, PartialCall>, check: AnswerCheck): void {
  for (const raw of parts) {
    const part = objectOf(raw, "a tool call");
    const index = toolIndexOf(part.index, check);
    const call = calls.get(index) ?? { name: "", args: "" };
    call.id ??= check.name(part.id, "tool_call_id");
    const fn = optionalObject(part.function, "a tool call function");
    if (fn.name !== undefined) call.name += fragmentOf(fn.name, "a tool call name");
    if (fn.arguments !== undefined) call.args += fragmentOf(fn.arguments, "tool call arguments");
    calls.set(index, call);
  }
}

class OpenAIDecoder implements PayloadDecoder {
  model?: string;
  readonly #calls = new Map<number, PartialCall>();
  #finish: string | undefined;
  #usage: Usage | undefined;
  #modelRead = false;
  /** What was passed on, for an estimate should the usage be missing or invalid. */
  #chars = 0;

  constructor(private readonly req: ChatRequest, private readonly check: AnswerCheck) {}

  payload(payload: string, out: ChatEvent[]): boolean {
    if (payload === "[DONE]") {
      this.#done(out);
      return true;
    }
    const check = this.check;
    let raw: unknown;
    try {
      raw = JSON.parse(payload);
    } catch {
      throw new BadGateway("The model server sent a malformed stream");
    }
    const chunk = objectOf(raw, "a stream chunk");
    if (chunk.error) {
      throw new BackendFailure(`model server reported an error: ${errorMessage(payload)}`, true, true);
    }
    if (!this.#modelRead && chunk.model !== undefined) {
      this.#modelRead = true;
      this.model = check.name(chunk.model, "model");
    }
    if (chunk.usage !== undefined && chunk.usage !== null) this.#usage = usageOf(chunk.usage, check);
    const choices = listOf(chunk.choices, "choices");
    if (!choices.length) return false;
    const choice = objectOf(choices[0], "a choice");
    const delta = optionalObject(choice.delta, "a delta");
    const content = textOf(delta.content, "content");
    const thinking = check.reasoning(delta.reasoning_content) ?? check.reasoning(delta.reasoning);
    const parts = listOf(delta.tool_calls, "tool calls");
    if (parts.length) addFragments(parts, this.#calls, check);
    if (content || thinking) {
      this.#chars += content.length + (thinking?.length ?? 0);
      const event: ChatDelta = { type: "delta" };
      if (thinking) event.thinking = thinking;
      if (content) event.content = content;
      out.push(event);
    }
    this.#finish = finishOf(choice.finish_reason, check) ?? this.#finish;
    return false;
  }

  /**
   * The usage chunk comes after the finish reason: a stream cut off between the two (a clean close without
   * [DONE]) would otherwise complete with zero tokens, billed as the backend's count.
   */
  end(): void {
    throw new BadGateway("The model server's stream ended before the answer was complete");
  }

  /** `[DONE]`: the reassembled tool calls, then the end with the counts. */
  #done(out: ChatEvent[]): void {
    const finish = this.#finish;
    if (!finish) throw new BadGateway("The model server's stream ended before the answer was complete");
    let chars = this.#chars;
    const toolCalls: ToolCall[] = [...this.#calls.entries()].sort(([a], [b]) => a - b).map(([, c]) => {
      chars += c.name.length + c.args.length;
      return { ...(c.id ? { id: c.id } : {}), name: toolName(c.name), arguments: toolArguments(c.args) };
    });
    if (toolCalls.length) out.push({ type: "delta", toolCalls });
    out.push({
      type: "done",
      finishReason: internalFinish(finish, toolCalls.length > 0),
      ...answerTokens(this.#usage?.prompt, this.#usage?.completion, this.req, () => chars),
    });
  }
}

export function readOpenAIStream(
  open: OpenResponse,
  req: ChatRequest,
  check: AnswerCheck,
  limits: StreamLimits,
): Promise<EventStream> {
  return readEventStream(open, sseFraming(), new OpenAIDecoder(req, check), req.model, limits);
}
