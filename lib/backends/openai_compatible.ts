/**
 * @module OpenAI-compatible backends (vLLM, llama.cpp's server, …): `POST …/v1/chat/completions`, with the
 * server's API key as a bearer token. Reasoning is read from `reasoning_content` or `reasoning`, as
 * servers disagree on the name.
 */
import { BadGateway } from "../errors.ts";
import { hasImages } from "../chat/has_images.ts";
import type { ChatMessage, ChatRequest, ChatResult, ToolCall } from "../chat/types.ts";
import type { ServerRecord } from "../store/records.ts";
import type { BackendAdapter, CallContext } from "./adapter.ts";
import { openResponse, postJson } from "./http_call.ts";
import { readOpenAIStream } from "./openai_stream.ts";
import { streamLimits } from "./stream_reading.ts";
import {
  answerChars,
  AnswerCheck,
  answerTokens,
  listOf,
  objectOf,
  textOf,
  toolArguments,
  toolName,
} from "./answer_values.ts";
import { finishOf, internalFinish, usageOf } from "./openai_answer.ts";
import { memoByUrl } from "./url_memo.ts";

/**
 * An id for a tool call that came without one (Ollama's native format has none before v0.12.10). Nine letters
 * and digits: the one shape every server accepts, as vLLM's Mistral tokenizer refuses any other.
 */
function newCallId(): string {
  const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  return Array.from(crypto.getRandomValues(new Uint8Array(9)), (b) => alphabet[b % alphabet.length]).join("");
}

function toContent(m: ChatMessage): unknown {
  if (!m.images?.length) return m.content;
  return [
    ...(m.content ? [{ type: "text", text: m.content }] : []),
    ...m.images.map((b64) => ({ type: "image_url", image_url: { url: `data:image/png;base64,${b64}` } })),
  ];
}

/**
 * OpenAI-compatible servers pair a tool result with its call by `tool_call_id`, which every call and every
 * result must carry. Clients of the native format send calls without ids and results by tool name, so the
 * missing ids are made up here, and each result takes the id of the open call of its tool (else the first
 * open call) of the assistant turn before it.
 */
function toMessages(messages: ChatMessage[]): Record<string, unknown>[] {
  let open: { id: string; name: string }[] = [];
  return messages.map((m) => {
    const out: Record<string, unknown> = { role: m.role, content: toContent(m) };
    if (m.toolCalls?.length) {
      open = m.toolCalls.map((c) => ({ id: c.id ?? newCallId(), name: c.name }));
      out.tool_calls = m.toolCalls.map((c, i) => ({
        id: open[i].id,
        type: "function",
        function: { name: c.name, arguments: JSON.stringify(c.arguments) },
      }));
    }
    if (m.role === "tool") {
      const answered = m.toolCallId !== undefined
        ? open.findIndex((c) => c.id === m.toolCallId)
        : Math.max(0, open.findIndex((c) => c.name === m.toolName));
      const id = m.toolCallId ?? open[answered]?.id;
      if (answered >= 0) open.splice(answered, 1);
      if (id) out.tool_call_id = id;
      if (m.toolName) out.name = m.toolName;
    }
    return out;
  });
}

export function toOpenAIBody(req: ChatRequest, stream: boolean): Record<string, unknown> {
  const o = req.options;
  const body: Record<string, unknown> = { model: req.model, messages: toMessages(req.messages), stream };
  if (stream) body.stream_options = { include_usage: true };
  const fields: Record<string, unknown> = {
    temperature: o.temperature,
    top_p: o.topP,
    top_k: o.topK,
    min_p: o.minP,
    repetition_penalty: o.repeatPenalty,
    presence_penalty: o.presencePenalty,
    frequency_penalty: o.frequencyPenalty,
    seed: o.seed,
    stop: o.stop,
    max_tokens: o.numPredict !== undefined && o.numPredict > 0 ? o.numPredict : undefined,
  };
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) body[k] = v;
  if (req.format === "json") body.response_format = { type: "json_object" };
  else if (req.format) {
    body.response_format = { type: "json_schema", json_schema: { name: "response", schema: req.format } };
  }
  if (req.think === false) body.chat_template_kwargs = { enable_thinking: false };
  else if (typeof req.think === "string") body.reasoning_effort = req.think;
  if (req.tools?.length) {
    body.tools = req.tools.map((t) => ({ type: "function", function: t }));
    if (req.toolChoice !== undefined) {
      body.tool_choice = typeof req.toolChoice === "string"
        ? req.toolChoice
        : { type: "function", function: { name: req.toolChoice.name } };
    }
  }
  return body;
}

function toolCallOf(raw: unknown, check: AnswerCheck): ToolCall {
  const call = objectOf(raw, "a tool call");
  const fn = objectOf(call.function, "a tool call function");
  const id = check.name(call.id, "tool_call_id");
  return { ...(id ? { id } : {}), name: toolName(fn.name), arguments: toolArguments(fn.arguments) };
}

/** The whole answer as the internal result; its values checked once, here. */
export function fromOpenAIResponse(raw: unknown, req: ChatRequest, check: AnswerCheck): ChatResult {
  const body = objectOf(raw, "a chat response");
  const choices = body.choices;
  if (!Array.isArray(choices) || !choices.length) {
    throw new BadGateway("The model server answered with a malformed chat response");
  }
  const choice = objectOf(choices[0], "a choice");
  const message = objectOf(choice.message, "a message");
  const content = textOf(message.content, "message content");
  const thinking = check.reasoning(message.reasoning_content) ?? check.reasoning(message.reasoning);
  const calls = listOf(message.tool_calls, "tool calls");
  const toolCalls = calls.length ? calls.map((c) => toolCallOf(c, check)) : [];
  const finish = finishOf(choice.finish_reason, check);
  const usage = usageOf(body.usage, check);
  return {
    model: check.name(body.model, "model") ?? req.model,
    content,
    ...(thinking ? { thinking } : {}),
    toolCalls,
    finishReason: internalFinish(finish, toolCalls.length > 0),
    ...answerTokens(usage?.prompt, usage?.completion, req, () => answerChars(content, thinking, toolCalls)),
  };
}

export const chatCompletionsUrl = memoByUrl((base) => {
  const trimmed = base.replace(/\/+$/, "");
  return trimmed.endsWith("/v1") ? `${trimmed}/chat/completions` : `${trimmed}/v1/chat/completions`;
});

function postOptions(req: ChatRequest, server: ServerRecord) {
  const headers: Record<string, string> = server.apiKey ? { Authorization: `Bearer ${server.apiKey}` } : {};
  return { headers, hasImages: hasImages(req) };
}

export const openaiBackend: BackendAdapter = {
  async chat(req: ChatRequest, server: ServerRecord, ctx: CallContext): Promise<ChatResult> {
    const url = chatCompletionsUrl(server.url);
    const raw = await postJson(url, toOpenAIBody(req, false), ctx, postOptions(req, server));
    return fromOpenAIResponse(raw, req, new AnswerCheck(server.name, ctx.values));
  },

  async stream(req: ChatRequest, server: ServerRecord, ctx: CallContext) {
    const url = chatCompletionsUrl(server.url);
    const open = await openResponse(url, toOpenAIBody(req, true), ctx, postOptions(req, server));
    return await readOpenAIStream(open, req, new AnswerCheck(server.name, ctx.values), streamLimits(ctx));
  },
};
