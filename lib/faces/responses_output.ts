/**
 * @module The Response object of the Responses API and its output items, shared by the whole answer and the
 * stream's lifecycle events. The settings it echoes are those the request was served with, after the key's
 * rules (tools a key may not use are not listed, a forced JSON mode shows as the text format); `store` is
 * always false, as nothing is kept. Item ids carry the request's id, so they are unique per response.
 */
import type { ChatRequest, ToolCall } from "../chat/types.ts";
import { newToolCallId } from "./tool_call_id.ts";

export type ItemStatus = "in_progress" | "completed" | "incomplete";
export type ResponseStatus = "in_progress" | "completed" | "incomplete" | "failed";
type Json = Record<string, unknown>;

/** What every Response object of one request shares. */
export interface ResponseFrame {
  requestId: string;
  /** Seconds since the epoch. */
  createdAt: number;
  model: string;
  request: ChatRequest;
}

export const itemId = (kind: "msg" | "rs" | "fc", frame: ResponseFrame, index: number) =>
  `${kind}_${frame.requestId}_${index}`;

export function messageItem(id: string, text: string, status: ItemStatus): Json {
  return { id, type: "message", status, role: "assistant", content: [outputText(text)] };
}

export const outputText = (text: string): Json => ({
  type: "output_text",
  text,
  annotations: [],
  logprobs: [],
});

export function reasoningItem(id: string, text: string, status: ItemStatus): Json {
  return { id, type: "reasoning", status, summary: text ? [summaryText(text)] : [] };
}

export const summaryText = (text: string): Json => ({ type: "summary_text", text });

export function functionCallItem(id: string, call: ToolCall, callId: string, status: ItemStatus): Json {
  return {
    id,
    type: "function_call",
    status,
    call_id: callId,
    name: call.name,
    arguments: JSON.stringify(call.arguments),
  };
}

/**
 * The client pairs a call's output with it by this id, so each call of a response needs its own: one the
 * backend sent none for, or sent again for another call (the SDKs refuse a response that repeats one), gets
 * one made up. `used` holds the response's ids so far.
 */
export function callIdOf(call: ToolCall, used: Set<string>): string {
  let id = call.id;
  while (id === undefined || used.has(id)) id = newToolCallId();
  used.add(id);
  return id;
}

export function usageOf(promptTokens: number, completionTokens: number): Json {
  return {
    input_tokens: promptTokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: completionTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: promptTokens + completionTokens,
  };
}

function textFormat(format: ChatRequest["format"]): Json {
  if (format === "json") return { type: "json_object" };
  if (format) return { type: "json_schema", name: "response", schema: format, strict: false };
  return { type: "text" };
}

function reasoningEffort(think: ChatRequest["think"]): string | null {
  if (think === false) return "none";
  return typeof think === "string" ? think : null;
}

function toolChoice(choice: ChatRequest["toolChoice"]): unknown {
  if (choice === undefined) return "auto";
  return typeof choice === "string" ? choice : { type: "function", name: choice.name };
}

export interface Ending {
  status: ResponseStatus;
  output: Json[];
  usage: Json | null;
  /** Seconds since the epoch, when the response completed. */
  completedAt?: number;
  error?: { code: string; message: string };
}

export function responseObject(frame: ResponseFrame, ending: Ending): Json {
  const { request } = frame;
  const numPredict = request.options.numPredict;
  return {
    id: `resp_${frame.requestId}`,
    object: "response",
    created_at: frame.createdAt,
    status: ending.status,
    completed_at: ending.completedAt ?? null,
    error: ending.error ?? null,
    incomplete_details: ending.status === "incomplete" ? { reason: "max_output_tokens" } : null,
    instructions: null,
    max_output_tokens: numPredict !== undefined && numPredict > 0 ? numPredict : null,
    model: frame.model,
    output: ending.output,
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: reasoningEffort(request.think), summary: null },
    store: false,
    temperature: request.options.temperature ?? null,
    text: { format: textFormat(request.format) },
    tool_choice: toolChoice(request.toolChoice),
    tools: (request.tools ?? []).map((t) => ({
      type: "function",
      name: t.name,
      description: t.description ?? null,
      parameters: t.parameters ?? null,
      strict: false,
    })),
    top_p: request.options.topP ?? null,
    truncation: "disabled",
    usage: ending.usage,
    metadata: {},
  };
}
