/**
 * @module The Ollama-native backend: `POST /api/chat`. Knows Ollama's request and response shapes and
 * nothing of clients' formats.
 */
import { z } from "zod";
import { BadGateway } from "../errors.ts";
import type {
  ChatMessage,
  ChatRequest,
  ChatResult,
  FinishReason,
  GenerationOptions,
  ToolCall,
} from "../chat/types.ts";
import { hasImages } from "../chat/has_images.ts";
import type { ServerRecord } from "../store/records.ts";
import type { BackendAdapter, CallContext } from "./adapter.ts";
import { openResponse, postJson } from "./http_call.ts";
import { readOllamaStream } from "./ollama_stream.ts";
import { streamLimits } from "./stream_reading.ts";

const OPTION_NAMES = {
  temperature: "temperature",
  topP: "top_p",
  topK: "top_k",
  minP: "min_p",
  repeatPenalty: "repeat_penalty",
  presencePenalty: "presence_penalty",
  frequencyPenalty: "frequency_penalty",
  seed: "seed",
  stop: "stop",
  numCtx: "num_ctx",
  numPredict: "num_predict",
} satisfies Record<keyof GenerationOptions, string>;

function toOptions(options: GenerationOptions): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [ours, theirs] of Object.entries(OPTION_NAMES)) {
    const value = options[ours as keyof GenerationOptions];
    if (value !== undefined) out[theirs] = value;
  }
  return out;
}

function toMessage(m: ChatMessage): Record<string, unknown> {
  const out: Record<string, unknown> = { role: m.role, content: m.content };
  if (m.images?.length) out.images = m.images;
  if (m.thinking) out.thinking = m.thinking;
  if (m.toolCalls?.length) {
    out.tool_calls = m.toolCalls.map((c, index) => ({
      ...(c.id ? { id: c.id } : {}),
      function: { index, name: c.name, arguments: c.arguments },
    }));
  }
  if (m.toolName) out.tool_name = m.toolName;
  if (m.toolCallId) out.tool_call_id = m.toolCallId;
  return out;
}

export function toOllamaBody(req: ChatRequest, stream: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = { model: req.model, messages: req.messages.map(toMessage), stream };
  const options = toOptions(req.options);
  if (Object.keys(options).length) body.options = options;
  if (req.format !== undefined) body.format = req.format;
  if (req.think !== undefined) body.think = req.think;
  // Ollama ignores tool_choice; "none" is honoured by not offering the tools at all.
  if (req.tools?.length && req.toolChoice !== "none") {
    body.tools = req.tools.map((t) => ({ type: "function", function: t }));
  }
  if (req.keepAlive !== undefined) body.keep_alive = req.keepAlive;
  return body;
}

const ToolCallShape = z.object({
  id: z.string().optional(),
  function: z.object({ name: z.string(), arguments: z.record(z.string(), z.unknown()).default({}) }),
});

/** One chat object: the whole answer (stream:false) or one line of a stream. */
export const ChatChunkShape = z.object({
  model: z.string().optional(),
  message: z.object({
    content: z.string().default(""),
    thinking: z.string().optional(),
    tool_calls: z.array(ToolCallShape).optional(),
  }),
  done: z.boolean().default(false),
  done_reason: z.string().optional(),
  total_duration: z.number().optional(),
  prompt_eval_count: z.number().optional(),
  eval_count: z.number().optional(),
});
export type ChatChunk = z.infer<typeof ChatChunkShape>;

export function toolCallsOf(chunk: ChatChunk): ToolCall[] {
  return (chunk.message.tool_calls ?? []).map((c) => ({
    ...(c.id ? { id: c.id } : {}),
    name: c.function.name,
    arguments: c.function.arguments,
  }));
}

export function finishReasonOf(chunk: ChatChunk, calledTools: boolean): FinishReason {
  return calledTools ? "tool_calls" : chunk.done_reason === "length" ? "length" : "stop";
}

export function fromOllamaResponse(raw: unknown, requestedModel: string): ChatResult {
  const parsed = ChatChunkShape.safeParse(raw);
  if (!parsed.success || (raw as { error?: unknown }).error !== undefined) {
    throw new BadGateway("The model server answered with a malformed chat response");
  }
  const r = parsed.data;
  const toolCalls = toolCallsOf(r);
  return {
    model: r.model ?? requestedModel,
    content: r.message.content,
    ...(r.message.thinking ? { thinking: r.message.thinking } : {}),
    toolCalls,
    finishReason: finishReasonOf(r, toolCalls.length > 0),
    // Ollama omits zero-valued metrics (and the prompt count on a cache hit): absent means 0.
    promptTokens: r.prompt_eval_count ?? 0,
    completionTokens: r.eval_count ?? 0,
    ...(r.total_duration !== undefined ? { totalDurationNs: r.total_duration } : {}),
  };
}

function chatUrl(server: ServerRecord): string {
  return `${server.url.replace(/\/+$/, "")}/api/chat`;
}

export const ollamaBackend: BackendAdapter = {
  async chat(req: ChatRequest, server: ServerRecord, ctx: CallContext): Promise<ChatResult> {
    const raw = await postJson(chatUrl(server), toOllamaBody(req, false), ctx, { hasImages: hasImages(req) });
    return fromOllamaResponse(raw, req.model);
  },

  async stream(req: ChatRequest, server: ServerRecord, ctx: CallContext) {
    const open = await openResponse(chatUrl(server), toOllamaBody(req, true), ctx, {
      hasImages: hasImages(req),
    });
    return await readOllamaStream(open, req.model, streamLimits(ctx));
  },
};
