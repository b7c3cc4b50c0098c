/**
 * @module The Ollama-native backend: `POST /api/chat`. Knows Ollama's request and response shapes and
 * nothing of clients' formats.
 */
import { BadGateway } from "../errors.ts";
import type { ChatMessage, ChatRequest, ChatResult, GenerationOptions } from "../chat/types.ts";
import { hasImages } from "../chat/has_images.ts";
import { OLLAMA_OPTION_PAIRS } from "../chat/ollama_options.ts";
import type { ServerRecord } from "../store/records.ts";
import type { BackendAdapter, CallContext } from "./adapter.ts";
import { openResponse, postJson } from "./http_call.ts";
import { readOllamaStream } from "./ollama_stream.ts";
import { answerChars, AnswerCheck, answerTokens, objectOf } from "./answer_values.ts";
import { finishReasonOf, readOllamaObject } from "./ollama_answer.ts";
import { streamLimits } from "./stream_reading.ts";
import { memoByUrl } from "./url_memo.ts";
import { bitsOf, listedBits } from "../runtime/listed_keys.ts";

/** Each option's bit, by its name in a request. */
const OPTION_BITS = bitsOf(OLLAMA_OPTION_PAIRS.map(([ours]) => ours));

/**
 * Ollama's `options` object, or undefined when the request sets none. Only the options a request names are
 * looked up (it names one or two of eleven), in the table's order, which is the order they are sent in.
 */
function toOptions(options: GenerationOptions): Record<string, unknown> | undefined {
  const named = listedBits(OPTION_BITS, options);
  let out: Record<string, unknown> | undefined;
  for (let i = 0; named >> i; i++) {
    if (!(named & (1 << i))) continue;
    const pair = OLLAMA_OPTION_PAIRS[i];
    const value = options[pair[0]];
    if (value !== undefined) (out ??= {})[pair[1]] = value;
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
  if (options) body.options = options;
  if (req.format !== undefined) body.format = req.format;
  if (req.think !== undefined) body.think = req.think;
  // Ollama ignores tool_choice; "none" is honoured by not offering the tools at all.
  if (req.tools?.length && req.toolChoice !== "none") {
    body.tools = req.tools.map((t) => ({ type: "function", function: t }));
  }
  if (req.keepAlive !== undefined) body.keep_alive = req.keepAlive;
  return body;
}

/** The whole answer (stream:false) as the internal result; its values checked once, here. */
export function fromOllamaResponse(raw: unknown, req: ChatRequest, check: AnswerCheck): ChatResult {
  const body = objectOf(raw, "a chat response");
  if (body.error !== undefined) {
    throw new BadGateway("The model server answered with a malformed chat response");
  }
  const r = readOllamaObject(body, check, true);
  const tokens = answerTokens(
    r.promptTokens,
    r.completionTokens,
    req,
    () => answerChars(r.content, r.thinking, r.toolCalls),
  );
  return {
    model: check.name(body.model, "model") ?? req.model,
    content: r.content,
    ...(r.thinking ? { thinking: r.thinking } : {}),
    toolCalls: r.toolCalls,
    finishReason: finishReasonOf(r.length, r.toolCalls.length > 0),
    ...tokens,
    ...(r.totalDurationNs !== undefined ? { totalDurationNs: r.totalDurationNs } : {}),
  };
}

const chatUrl = memoByUrl((base) => `${base.replace(/\/+$/, "")}/api/chat`);

export const ollamaBackend: BackendAdapter = {
  async chat(req: ChatRequest, server: ServerRecord, ctx: CallContext): Promise<ChatResult> {
    const raw = await postJson(chatUrl(server.url), toOllamaBody(req, false), ctx, {
      hasImages: hasImages(req),
    });
    return fromOllamaResponse(raw, req, new AnswerCheck(server.name, ctx.values));
  },

  async stream(req: ChatRequest, server: ServerRecord, ctx: CallContext) {
    const open = await openResponse(chatUrl(server.url), toOllamaBody(req, true), ctx, {
      hasImages: hasImages(req),
    });
    return await readOllamaStream(open, req, new AnswerCheck(server.name, ctx.values), streamLimits(ctx));
  },
};
