/**
 * @module An OpenAI-compatible server's streamed answer (SSE) as internal events. Tool calls arrive there in
 * fragments (arguments split across chunks); they are reassembled and passed on whole, at the finish.
 */
import { z } from "zod";
import { BackendFailure, BadGateway } from "../errors.ts";
import type { ChatEvent, FinishReason, ToolCall } from "../chat/types.ts";
import { errorMessage, type OpenResponse } from "./http_call.ts";
import { parseArguments } from "./openai_compatible.ts";
import { type EventStream, readEventStream, sseFraming, type StreamLimits } from "./stream_reading.ts";

const ChunkShape = z.object({
  model: z.string().optional(),
  choices: z.array(z.object({
    delta: z.object({
      content: z.string().nullable().optional(),
      reasoning_content: z.string().nullable().optional(),
      reasoning: z.string().nullable().optional(),
      tool_calls: z.array(z.object({
        index: z.number().default(0),
        id: z.string().optional(),
        function: z.object({ name: z.string().optional(), arguments: z.string().optional() }).optional(),
      })).nullable().optional(),
    }).default({}),
    finish_reason: z.string().nullable().optional(),
  })).default([]),
  usage: z.object({ prompt_tokens: z.number(), completion_tokens: z.number() }).nullable().optional(),
});

interface PartialCall {
  id?: string;
  name: string;
  args: string;
}

async function* openaiEvents(
  data: AsyncIterable<string>,
  seen: { model?: string },
): AsyncGenerator<ChatEvent> {
  const calls = new Map<number, PartialCall>();
  let finish: string | undefined;
  let usage = { promptTokens: 0, completionTokens: 0 };
  let ended = false;
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
    if (raw && typeof raw === "object" && "error" in raw && (raw as { error: unknown }).error) {
      throw new BackendFailure(`model server reported an error: ${errorMessage(payload)}`, true, true);
    }
    const parsed = ChunkShape.safeParse(raw);
    if (!parsed.success) throw new BadGateway("The model server sent a malformed stream");
    seen.model ??= parsed.data.model;
    if (parsed.data.usage) {
      usage = {
        promptTokens: parsed.data.usage.prompt_tokens,
        completionTokens: parsed.data.usage.completion_tokens,
      };
    }
    const choice = parsed.data.choices[0];
    if (!choice) continue;
    const { content, tool_calls } = choice.delta;
    const thinking = choice.delta.reasoning_content ?? choice.delta.reasoning;
    for (const part of tool_calls ?? []) {
      const call = calls.get(part.index) ?? { name: "", args: "" };
      call.id ??= part.id;
      call.name += part.function?.name ?? "";
      call.args += part.function?.arguments ?? "";
      calls.set(part.index, call);
    }
    if (content || thinking) {
      yield { type: "delta", ...(thinking ? { thinking } : {}), ...(content ? { content } : {}) };
    }
    if (choice.finish_reason) finish = choice.finish_reason;
  }
  // The usage chunk comes after the finish reason: a stream cut off between the two (a clean close without
  // [DONE]) would otherwise complete with zero tokens, billed as the backend's count.
  if (!finish || !ended) {
    throw new BadGateway("The model server's stream ended before the answer was complete");
  }
  const toolCalls: ToolCall[] = [...calls.entries()].sort(([a], [b]) => a - b).map(([, c]) => ({
    ...(c.id ? { id: c.id } : {}),
    name: c.name,
    arguments: parseArguments(c.args),
  }));
  if (toolCalls.length) yield { type: "delta", toolCalls };
  const finishReason: FinishReason = toolCalls.length
    ? "tool_calls"
    : finish === "length"
    ? "length"
    : "stop";
  yield { type: "done", finishReason, ...usage };
}

export function readOpenAIStream(
  open: OpenResponse,
  model: string,
  limits: StreamLimits,
): Promise<EventStream> {
  return readEventStream(open, sseFraming(), openaiEvents, model, limits);
}
