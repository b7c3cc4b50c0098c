/**
 * @module Turns a Messages API body into the internal `ChatRequest`. Anthropic carries tool results inside a
 * user turn; the internal form has a tool message per result, so a user turn becomes its results first (they
 * answer the assistant turn before it), then what the user said. Images of a result go with that text, as
 * chat backends take images from user turns only. What no chat backend can serve is refused by name: an image
 * by URL or file (never fetched), documents, and Anthropic's server tools.
 */
import { InvalidRequest } from "../errors.ts";
import type { ChatMessage, ChatRequest, GenerationOptions, Think, ToolChoice } from "../chat/types.ts";
import type { Block, ImageBlock, MessageBody, MessagesBody } from "./anthropic_body.ts";
import { imageFromInline } from "./images.ts";

const refuse = (message: string) => new InvalidRequest(`Cannot parse request: ${message}`);

function image(block: ImageBlock, at: string): string {
  const source = block.source;
  if (source.type === "base64") return imageFromInline(source.data, `${at}.source.data`);
  throw refuse(
    `"${at}.source" is an image by ${source.type}; this gateway takes images as base64 data only ` +
      `(source.type "base64") and never fetches them`,
  );
}

function unserved(block: Block, at: string): never {
  throw refuse(`"${at}" is a ${block.type} block, which this gateway cannot serve`);
}

/** A tool result's content: its text, and its images for the user turn that follows the results. */
function toolResult(block: Extract<Block, { type: "tool_result" }>, at: string, images: string[]): string {
  const content = block.content;
  if (content === undefined) return "";
  if (typeof content === "string") return content;
  const texts: string[] = [];
  content.forEach((part, k) => {
    if (part.type === "text") texts.push(part.text);
    else images.push(image(part, `${at}.content[${k}]`));
  });
  return texts.join("\n");
}

/** The internal messages of one user turn: a tool message per result, then the user's own text and images. */
function userTurn(blocks: Block[], at: string, out: ChatMessage[]): void {
  const texts: string[] = [];
  const images: string[] = [];
  let results = 0;
  blocks.forEach((block, j) => {
    const where = `${at}.content[${j}]`;
    switch (block.type) {
      case "text":
        return void texts.push(block.text);
      case "image":
        return void images.push(image(block, where));
      case "tool_result": {
        results++;
        const content = toolResult(block, where, images);
        const call = findCall(out, block.tool_use_id);
        out.push({
          role: "tool",
          content: block.is_error ? `Error: ${content}` : content,
          toolCallId: block.tool_use_id,
          ...(call ? { toolName: call } : {}),
        });
        return;
      }
      case "tool_use":
      case "thinking":
      case "redacted_thinking":
        throw refuse(`"${where}" is a ${block.type} block, which only an assistant turn may carry`);
      default:
        return unserved(block, where);
    }
  });
  if (results === 0 || texts.length || images.length) {
    out.push({ role: "user", content: texts.join("\n"), ...(images.length ? { images } : {}) });
  }
}

function assistantTurn(blocks: Block[], at: string): ChatMessage {
  const texts: string[] = [];
  const thinking: string[] = [];
  const message: ChatMessage = { role: "assistant", content: "" };
  blocks.forEach((block, j) => {
    const where = `${at}.content[${j}]`;
    switch (block.type) {
      case "text":
        return void texts.push(block.text);
      case "thinking":
        return void thinking.push(block.thinking);
      case "redacted_thinking":
        // Encrypted reasoning of Anthropic's own models: nothing another model can read.
        return;
      case "tool_use":
        (message.toolCalls ??= []).push({ id: block.id, name: block.name, arguments: block.input });
        return;
      case "image":
      case "tool_result":
        throw refuse(`"${where}" is a ${block.type} block, which only a user turn may carry`);
      default:
        return unserved(block, where);
    }
  });
  message.content = texts.join("\n");
  if (thinking.length) message.thinking = thinking.join("\n");
  return message;
}

/** The tool a result answers, named by the assistant turn that called it. */
function findCall(earlier: ChatMessage[], id: string): string | undefined {
  for (let i = earlier.length - 1; i >= 0; i--) {
    const call = earlier[i].toolCalls?.find((c) => c.id === id);
    if (call) return call.name;
  }
  return undefined;
}

function toMessages(body: MessagesBody): ChatMessage[] {
  const out: ChatMessage[] = [];
  const system = typeof body.system === "string" ? body.system : body.system?.map((b) => b.text).join("\n");
  if (system) out.push({ role: "system", content: system });
  body.messages.forEach((m: MessageBody, i) => {
    const at = `messages[${i}]`;
    if (typeof m.content === "string") return void out.push({ role: m.role, content: m.content });
    if (m.role === "assistant") return void out.push(assistantTurn(m.content, at));
    if (m.role === "user") return userTurn(m.content, at, out);
    const texts = m.content.map((block, j) => {
      if (block.type !== "text") throw refuse(`"${at}.content[${j}]" must be a text block in a system turn`);
      return block.text;
    });
    out.push({ role: "system", content: texts.join("\n") });
  });
  return out;
}

function toOptions(body: MessagesBody): GenerationOptions {
  const options: GenerationOptions = { numPredict: body.max_tokens };
  if (body.temperature !== undefined) options.temperature = body.temperature;
  if (body.top_p !== undefined) options.topP = body.top_p;
  if (body.top_k !== undefined) options.topK = body.top_k;
  if (body.stop_sequences?.length) options.stop = body.stop_sequences;
  return options;
}

/** Anthropic's thinking switch, with `output_config.effort` as the level where one is asked. */
function toThink(body: MessagesBody): Think | undefined {
  const effort = body.output_config?.effort;
  const level = effort === "xhigh" || effort === "max" ? "high" : effort ?? undefined;
  switch (body.thinking?.type) {
    case undefined:
      return level;
    case "disabled":
      return false;
    default:
      return level ?? true;
  }
}

function toToolChoice(choice: MessagesBody["tool_choice"]): ToolChoice | undefined {
  if (!choice) return undefined;
  switch (choice.type) {
    case "any":
      return "required";
    case "tool":
      return { name: choice.name };
    default:
      return choice.type;
  }
}

export function toChatRequest(body: MessagesBody): ChatRequest {
  const request: ChatRequest = {
    model: body.model ?? "",
    messages: toMessages(body),
    stream: body.stream ?? false,
    includeUsage: true,
    options: toOptions(body),
  };
  const format = body.output_config?.format ?? body.output_format;
  if (format) request.format = format.schema;
  const think = toThink(body);
  if (think !== undefined) request.think = think;
  if (body.tools?.length) {
    request.tools = body.tools.map((t, i) => {
      if (t.type && t.type !== "custom") {
        // The type is the client's own text, as long as the body allows: echo only its start.
        const shown = t.type.length > 80 ? `${t.type.slice(0, 80)}…` : t.type;
        throw refuse(`"tools[${i}]" is Anthropic's server tool ${shown}, which this gateway cannot serve`);
      }
      if (!t.input_schema) throw refuse(`"tools[${i}].input_schema" must be an object`);
      return {
        name: t.name,
        parameters: t.input_schema,
        ...(t.description !== undefined ? { description: t.description } : {}),
      };
    });
  }
  const toolChoice = toToolChoice(body.tool_choice);
  if (toolChoice !== undefined) request.toolChoice = toolChoice;
  return request;
}
