/**
 * @module An OpenAI-compatible server's streamed answer (SSE) as internal events. Tool calls arrive there in
 * fragments (arguments split across chunks); they are reassembled and passed on whole, at the finish.
 */
import { BackendFailure, BadGateway } from "../errors.ts";
import type { ChatEvent, ChatRequest, ToolCall } from "../chat/types.ts";
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
import { type EventStream, readEventStream, sseFraming, type StreamLimits } from "./stream_reading.ts";

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

async function* openaiEvents(
  data: AsyncIterable<string>,
  seen: { model?: string },
  req: ChatRequest,
  check: AnswerCheck,
): AsyncGenerator<ChatEvent> {
  const calls = new Map<number, PartialCall>();
  let finish: string | undefined;
  let usage: Usage | undefined;
  let ended = false;
  let modelRead = false;
  // What was passed on, for an estimate should the usage be missing or invalid.
  let chars = 0;
  for await (const payload of data) {
    if (payload === "[DONE]") {
      ended = true;
      break;
    }
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
    if (!modelRead && chunk.model !== undefined) {
      modelRead = true;
      seen.model = check.name(chunk.model, "model");
    }
    if (chunk.usage !== undefined && chunk.usage !== null) usage = usageOf(chunk.usage, check);
    const choices = listOf(chunk.choices, "choices");
    if (!choices.length) continue;
    const choice = objectOf(choices[0], "a choice");
    const delta = optionalObject(choice.delta, "a delta");
    const content = textOf(delta.content, "content");
    const thinking = check.reasoning(delta.reasoning_content) ?? check.reasoning(delta.reasoning);
    const parts = listOf(delta.tool_calls, "tool calls");
    if (parts.length) addFragments(parts, calls, check);
    if (content || thinking) {
      chars += content.length + (thinking?.length ?? 0);
      yield { type: "delta", ...(thinking ? { thinking } : {}), ...(content ? { content } : {}) };
    }
    finish = finishOf(choice.finish_reason, check) ?? finish;
  }
  // The usage chunk comes after the finish reason: a stream cut off between the two (a clean close without
  // [DONE]) would otherwise complete with zero tokens, billed as the backend's count.
  if (!finish || !ended) {
    throw new BadGateway("The model server's stream ended before the answer was complete");
  }
  const toolCalls: ToolCall[] = [...calls.entries()].sort(([a], [b]) => a - b).map(([, c]) => {
    chars += c.name.length + c.args.length;
    return { ...(c.id ? { id: c.id } : {}), name: toolName(c.name), arguments: toolArguments(c.args) };
  });
  if (toolCalls.length) yield { type: "delta", toolCalls };
  yield {
    type: "done",
    finishReason: internalFinish(finish, toolCalls.length > 0),
    ...answerTokens(usage?.prompt, usage?.completion, req, () => chars),
  };
}

export function readOpenAIStream(
  open: OpenResponse,
  req: ChatRequest,
  check: AnswerCheck,
  limits: StreamLimits,
): Promise<EventStream> {
  return readEventStream(
    open,
    sseFraming(),
    (data, seen) => openaiEvents(data, seen, req, check),
    req.model,
    limits,
  );
}
