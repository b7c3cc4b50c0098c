/**
 * @module Turns a validated chat body into the internal `ChatRequest`. Field precedence, where a client sends
 * the same thing twice: format B's `options` over top-level fields, `num_predict` over `max_completion_tokens`
 * over `max_tokens`, native `format` over `response_format`, native `think` over `reasoning_effort`.
 */
import { InvalidRequest } from "../errors.ts";
import type {
  ChatMessage,
  ChatRequest,
  GenerationOptions,
  Think,
  ToolCall,
  ToolChoice,
} from "../chat/types.ts";
import type { ChatBody, MessageBody } from "./chat_body.ts";
import { imageFromInline, imageFromUrl } from "./images.ts";
import { OLLAMA_OPTION_NAMES } from "../chat/ollama_options.ts";
import { bitsOf, listedBits } from "../runtime/listed_keys.ts";

function toolArguments(raw: string | Record<string, unknown> | undefined, field: string) {
  if (raw === undefined || raw === "") return {};
  if (typeof raw !== "string") return raw;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new InvalidRequest(`Cannot parse request: "${field}" is not valid JSON`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new InvalidRequest(`Cannot parse request: "${field}" must encode a JSON object`);
  }
  return parsed as Record<string, unknown>;
}

function toMessage(msg: MessageBody, i: number, earlier: ChatMessage[]): ChatMessage {
  const at = `messages[${i}]`;
  const images: string[] = [];
  let content: string;
  if (typeof msg.content === "string") {
    content = msg.content;
  } else if (Array.isArray(msg.content)) {
    const texts: string[] = [];
    msg.content.forEach((part, j) => {
      if (part.type === "text") return void texts.push(part.text);
      const url = typeof part.image_url === "string" ? part.image_url : part.image_url.url;
      const image = imageFromUrl(url, `${at}.content[${j}].image_url`);
      if (image) images.push(image);
    });
    content = texts.join("\n");
  } else if (msg.role === "assistant" && msg.tool_calls?.length) {
    content = "";
  } else {
    throw new InvalidRequest(`Cannot parse request: "${at}.content" is required`);
  }
  msg.images?.forEach((img, j) => images.push(imageFromInline(img, `${at}.images[${j}]`)));

  const out: ChatMessage = { role: msg.role === "developer" ? "system" : msg.role, content };
  if (images.length) out.images = images;
  if (msg.role === "assistant") {
    const thinking = msg.thinking ?? msg.reasoning_content ?? msg.reasoning;
    if (thinking) out.thinking = thinking;
    if (msg.tool_calls?.length) {
      out.toolCalls = msg.tool_calls.map((call, j): ToolCall => ({
        ...(call.id ? { id: call.id } : {}),
        name: call.function.name,
        arguments: toolArguments(call.function.arguments, `${at}.tool_calls[${j}].function.arguments`),
      }));
    }
  }
  if (msg.role === "tool") {
    if (msg.tool_call_id) out.toolCallId = msg.tool_call_id;
    const name = msg.tool_name ?? msg.name ?? findToolName(earlier, msg.tool_call_id);
    if (name) out.toolName = name;
  }
  return out;
}

/** A tool result names its call by id; backends that want the tool's name get it from the call. */
function findToolName(earlier: ChatMessage[], id: string | undefined): string | undefined {
  if (!id) return undefined;
  for (let i = earlier.length - 1; i >= 0; i--) {
    const call = earlier[i].toolCalls?.find((c) => c.id === id);
    if (call) return call.name;
  }
  return undefined;
}

/** The options that are plain numbers, under the same name at the top level and in format B's `options`. */
const NUMBER_OPTIONS = [
  "temperature",
  "topP",
  "topK",
  "minP",
  "repeatPenalty",
  "presencePenalty",
  "frequencyPenalty",
  "seed",
  "numCtx",
] as const satisfies readonly (keyof GenerationOptions)[];

/** Each number option's bit, by the name a body gives it. */
const NUMBER_OPTION_BITS = bitsOf(NUMBER_OPTIONS.map((ours) => OLLAMA_OPTION_NAMES[ours]));

/** Format B's `options` win over the same fields at the top level; only fields present are set. */
function toOptions(body: ChatBody): GenerationOptions {
  const nested = body.options;
  const options: GenerationOptions = {};
  // Looked up only where named (`listed_keys.ts`), in the table's order, which Ollama is then sent them in.
  const named = listedBits(NUMBER_OPTION_BITS, body) | listedBits(NUMBER_OPTION_BITS, nested ?? undefined);
  for (let i = 0; named >> i; i++) {
    if (!(named & (1 << i))) continue;
    const ours = NUMBER_OPTIONS[i];
    const theirs = OLLAMA_OPTION_NAMES[ours];
    const value = nested?.[theirs] ?? body[theirs];
    if (value !== undefined) options[ours] = value;
  }
  const stop = nested?.stop ?? body.stop;
  if (stop !== undefined) options.stop = typeof stop === "string" ? [stop] : stop;
  const numPredict = nested?.num_predict ?? body.num_predict ?? body.max_completion_tokens ??
    body.max_tokens ??
    undefined;
  if (numPredict !== undefined) options.numPredict = numPredict;
  return options;
}

function toThink(body: ChatBody): Think | undefined {
  if (body.think !== undefined) return body.think === "max" ? "high" : body.think;
  return thinkForEffort(body.reasoning_effort);
}

/** OpenAI's reasoning effort (chat completions and Responses alike) as the backend's thinking switch. */
export function thinkForEffort(effort: ChatBody["reasoning_effort"]): Think | undefined {
  switch (effort) {
    case undefined:
    case null:
      return undefined;
    case "none":
    case "minimal":
      return false;
    case "xhigh":
    case "max":
      return "high";
    default:
      return effort;
  }
}

function toFormat(body: ChatBody): ChatRequest["format"] {
  if (body.format !== undefined && body.format !== "") return body.format;
  const rf = body.response_format;
  if (rf?.type === "json_object") return "json";
  if (rf?.type === "json_schema") return rf.json_schema.schema ?? "json";
  return undefined;
}

function toToolChoice(choice: ChatBody["tool_choice"]): ToolChoice | undefined {
  if (choice === undefined || typeof choice === "string") return choice;
  return { name: choice.function.name };
}

export function toChatRequest(body: ChatBody): ChatRequest {
  const messages: ChatMessage[] = [];
  body.messages.forEach((m, i) => messages.push(toMessage(m, i, messages)));
  const request: ChatRequest = {
    model: body.model ?? "",
    messages,
    stream: body.stream ?? false,
    includeUsage: body.stream_options?.include_usage ?? false,
    options: toOptions(body),
  };
  const format = toFormat(body);
  if (format !== undefined) request.format = format;
  const think = toThink(body);
  if (think !== undefined) request.think = think;
  if (body.tools?.length) {
    request.tools = body.tools.map((t) => ({
      name: t.function.name,
      ...(t.function.description !== undefined ? { description: t.function.description } : {}),
      ...(t.function.parameters !== undefined ? { parameters: t.function.parameters } : {}),
    }));
  }
  const toolChoice = toToolChoice(body.tool_choice);
  if (toolChoice !== undefined) request.toolChoice = toolChoice;
  if (body.keep_alive !== undefined) request.keepAlive = body.keep_alive;
  return request;
}
