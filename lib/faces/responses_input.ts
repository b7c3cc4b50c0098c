/**
 * @module The Responses API's `input` and `instructions` as the internal conversation. Items become messages in
 * order: a function call joins the assistant turn it follows (a turn's calls arrive as separate items), its
 * output becomes a tool message naming the call, and reasoning sent back becomes the thinking of the assistant
 * turn after it. The gateway stores no responses, so an item that only refers to a stored one is refused, and
 * images must come inline: a remote URL is refused here rather than fetched (SSRF) or silently dropped.
 */
import { InvalidRequest } from "../errors.ts";
import type { ChatMessage, ToolCall } from "../chat/types.ts";
import type { ContentPart, InputItem, ResponsesBody } from "./responses_body.ts";
import { imageFromUrl } from "./images.ts";

const refuse = (message: string) => new InvalidRequest(`Cannot parse request: ${message}`);

function imageOf(part: Extract<ContentPart, { type: "input_image" }>, at: string): string {
  if (part.file_id) {
    throw refuse(`"${at}.file_id": this gateway stores no files; send the image as a data: URI in image_url`);
  }
  const url = part.image_url;
  if (!url) throw refuse(`"${at}.image_url" is required`);
  const image = imageFromUrl(url, `${at}.image_url`);
  if (image === undefined) {
    throw refuse(
      `"${at}.image_url" must be a data: URI (data:image/png;base64,…); this gateway fetches no remote images`,
    );
  }
  return image;
}

/** Text parts joined by newlines, as on the chat paths, and the images, as bare base64. */
function contentOf(content: string | ContentPart[], at: string): { text: string; images: string[] } {
  if (typeof content === "string") return { text: content, images: [] };
  const texts: string[] = [];
  const images: string[] = [];
  content.forEach((part, j) => {
    const where = `${at}[${j}]`;
    switch (part.type) {
      case "input_text":
      case "output_text":
        return void texts.push(part.text);
      case "refusal":
        return void texts.push(part.refusal);
      case "input_image":
        return void images.push(imageOf(part, where));
      case "input_file":
        throw refuse(`"${where}": files are not accepted here; send their text as input_text`);
    }
  });
  return { text: texts.join("\n"), images };
}

function callArguments(raw: string, at: string): Record<string, unknown> {
  if (raw.trim() === "") return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw refuse(`"${at}" is not valid JSON`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw refuse(`"${at}" must encode a JSON object`);
  }
  return parsed as Record<string, unknown>;
}

function toolNameOf(messages: ChatMessage[], callId: string): string | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const call = messages[i].toolCalls?.find((c) => c.id === callId);
    if (call) return call.name;
  }
  return undefined;
}

function withImages(message: ChatMessage, images: string[]): ChatMessage {
  if (images.length) message.images = images;
  return message;
}

export function toMessages(body: ResponsesBody): ChatMessage[] {
  const messages: ChatMessage[] = [];
  if (body.instructions) messages.push({ role: "system", content: body.instructions });
  if (typeof body.input === "string") {
    messages.push({ role: "user", content: body.input });
    return messages;
  }
  // Reasoning sent back belongs to the assistant turn that follows it.
  let thinking: string | undefined;
  const assistantTurn = (): ChatMessage => {
    const last = messages.at(-1);
    if (last?.role === "assistant" && thinking === undefined) return last;
    const turn: ChatMessage = { role: "assistant", content: "" };
    if (thinking) turn.thinking = thinking;
    thinking = undefined;
    messages.push(turn);
    return turn;
  };
  body.input.forEach((item: InputItem, i) => {
    const at = `input[${i}]`;
    switch (item.type) {
      case "message": {
        const { text, images } = contentOf(item.content, `${at}.content`);
        if (item.role !== "assistant") {
          const role = item.role === "developer" ? "system" : item.role;
          return void messages.push(withImages({ role, content: text }, images));
        }
        const turn = assistantTurn();
        turn.content = turn.content ? `${turn.content}\n${text}` : text;
        return void withImages(turn, [...(turn.images ?? []), ...images]);
      }
      case "function_call": {
        const turn = assistantTurn();
        const call: ToolCall = {
          id: item.call_id,
          name: item.name,
          arguments: callArguments(item.arguments, `${at}.arguments`),
        };
        turn.toolCalls = [...(turn.toolCalls ?? []), call];
        return;
      }
      case "function_call_output": {
        const { text, images } = contentOf(item.output, `${at}.output`);
        const result: ChatMessage = { role: "tool", content: text, toolCallId: item.call_id };
        const name = toolNameOf(messages, item.call_id);
        if (name) result.toolName = name;
        return void messages.push(withImages(result, images));
      }
      case "reasoning": {
        const parts = item.content?.length ? item.content : item.summary;
        const text = parts.map((p) => p.text).join("\n");
        if (text) thinking = thinking ? `${thinking}\n${text}` : text;
        return;
      }
      case "item_reference":
        throw refuse(
          `"${at}" refers to a stored item (${
            JSON.stringify(item.id.slice(0, 80))
          }), but this gateway stores` +
            " no responses: send the item itself (clients that refer to items do so unless told store: false)",
        );
    }
  });
  return messages;
}
