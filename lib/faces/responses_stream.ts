/**
 * @module Responses API streaming: the named SSE events the official SDKs' stream helpers rebuild a Response
 * from, each with its `sequence_number`. `response.created` and `response.in_progress` open the stream; each
 * output item is announced (`output_item.added`), filled (text and reasoning-summary deltas; a function call's
 * arguments in one delta, as backends hand calls over whole) and closed (`…done`, `output_item.done`); the
 * stream ends with `response.completed` (or `response.incomplete` at the token limit) carrying the usage.
 *
 * A stream that breaks ends with `response.failed`: the items so far, the error, and the usage the gateway
 * bills for it, an estimate as the account makes one for a cut stream (lib/account/mod.ts: four characters a
 * token, of the shaped prompt and of what was delivered), so the client is shown what its key is charged.
 */
import type { ChatEvent, ToolCall } from "../chat/types.ts";
import { estimateTokens } from "../chat/token_estimate.ts";
import type { GatewayError } from "../errors.ts";
import type { StreamContext, StreamRenderer } from "./face.ts";
import {
  callIdOf,
  functionCallItem,
  itemId,
  messageItem,
  outputText,
  reasoningItem,
  type ResponseFrame,
  responseObject,
  summaryText,
  usageOf,
} from "./responses_output.ts";

type Json = Record<string, unknown>;

/** The item being filled: text or reasoning arrives in pieces; calls come whole and never stay open. */
interface OpenItem {
  kind: "message" | "reasoning";
  index: number;
  id: string;
  text: string;
}

/** Characters delivered, counted as lib/http/stream_response.ts counts them for the account. */
function deliveredChars(event: ChatEvent): number {
  if (event.type !== "delta") return 0;
  let n = (event.content?.length ?? 0) + (event.thinking?.length ?? 0);
  for (const call of event.toolCalls ?? []) n += call.name.length + JSON.stringify(call.arguments).length;
  return n;
}

export function responsesStreamRenderer(ctx: StreamContext): StreamRenderer {
  const frame: ResponseFrame = {
    requestId: ctx.requestId,
    createdAt: Math.floor(ctx.startedAt / 1000),
    model: ctx.model,
    request: ctx.request,
  };
  const output: Json[] = [];
  let open: OpenItem | undefined;
  let sequence = 0;
  let started = false;
  let delivered = 0;
  const callIds = new Set<string>();

  const send = (type: string, fields: Json) =>
    `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...fields })}\n\n`;

  const begin = () => {
    started = true;
    const response = responseObject(frame, { status: "in_progress", output: [], usage: null });
    return send("response.created", { response }) + send("response.in_progress", { response });
  };

  const openItem = (kind: OpenItem["kind"]): string => {
    const index = output.length;
    const item = { kind, index, id: itemId(kind === "message" ? "msg" : "rs", frame, index), text: "" };
    open = item;
    const at = { item_id: item.id, output_index: index };
    if (kind === "message") {
      output.push(messageItem(item.id, "", "in_progress"));
      return send("response.output_item.added", {
        output_index: index,
        item: { ...messageItem(item.id, "", "in_progress"), content: [] },
      }) + send("response.content_part.added", { ...at, content_index: 0, part: outputText("") });
    }
    output.push(reasoningItem(item.id, "", "in_progress"));
    return send("response.output_item.added", {
      output_index: index,
      item: reasoningItem(item.id, "", "in_progress"),
    }) +
      send("response.reasoning_summary_part.added", { ...at, summary_index: 0, part: summaryText("") });
  };

  const append = (kind: OpenItem["kind"], delta: string): string => {
    let out = "";
    if (open?.kind !== kind) out += closeItem("completed") + openItem(kind);
    const item = open!;
    item.text += delta;
    const at = { item_id: item.id, output_index: item.index };
    return out +
      (kind === "message"
        ? send("response.output_text.delta", { ...at, content_index: 0, delta, logprobs: [] })
        : send("response.reasoning_summary_text.delta", { ...at, summary_index: 0, delta }));
  };

  const closeItem = (status: "completed" | "incomplete"): string => {
    const item = open;
    if (!item) return "";
    open = undefined;
    const at = { item_id: item.id, output_index: item.index };
    if (item.kind === "message") {
      const done = output[item.index] = messageItem(item.id, item.text, status);
      return send("response.output_text.done", { ...at, content_index: 0, text: item.text, logprobs: [] }) +
        send("response.content_part.done", { ...at, content_index: 0, part: outputText(item.text) }) +
        send("response.output_item.done", { output_index: item.index, item: done });
    }
    const done = output[item.index] = reasoningItem(item.id, item.text, "completed");
    return send("response.reasoning_summary_text.done", { ...at, summary_index: 0, text: item.text }) +
      send("response.reasoning_summary_part.done", {
        ...at,
        summary_index: 0,
        part: summaryText(item.text),
      }) +
      send("response.output_item.done", { output_index: item.index, item: done });
  };

  const functionCall = (call: ToolCall): string => {
    const index = output.length;
    const id = itemId("fc", frame, index);
    const callId = callIdOf(call, callIds);
    const done = functionCallItem(id, call, callId, "completed");
    output.push(done);
    const args = done.arguments as string;
    const at = { item_id: id, output_index: index };
    return send("response.output_item.added", {
      output_index: index,
      item: { ...functionCallItem(id, call, callId, "in_progress"), arguments: "" },
    }) +
      send("response.function_call_arguments.delta", { ...at, delta: args }) +
      send("response.function_call_arguments.done", { ...at, name: call.name, arguments: args }) +
      send("response.output_item.done", { output_index: index, item: done });
  };

  return {
    contentType: "text/event-stream",
    event(event: ChatEvent): string {
      delivered += deliveredChars(event);
      let out = started ? "" : begin();
      if (event.type === "delta") {
        if (event.thinking) out += append("reasoning", event.thinking);
        if (event.content) out += append("message", event.content);
        if (event.toolCalls?.length) {
          out += closeItem("completed");
          for (const call of event.toolCalls) out += functionCall(call);
        }
        return out;
      }
      const status = event.finishReason === "length" ? "incomplete" : "completed";
      out += closeItem(status);
      // An answer with nothing in it is still an (empty) message, as the whole answer shows it.
      if (!output.length) out += openItem("message") + closeItem(status);
      const response = responseObject(frame, {
        status,
        output,
        usage: usageOf(event.promptTokens, event.completionTokens),
        completedAt: status === "completed" ? Math.floor(ctx.now() / 1000) : undefined,
      });
      return out + send(`response.${status}`, { response });
    },
    error(error: GatewayError): string {
      let out = started ? "" : begin();
      if (open) {
        output[open.index] = open.kind === "message"
          ? messageItem(open.id, open.text, "incomplete")
          : reasoningItem(open.id, open.text, "incomplete");
        open = undefined;
      }
      const promptChars = ctx.request.messages.reduce((n, m) => n + m.content.length, 0);
      const response = responseObject(frame, {
        status: "failed",
        output,
        usage: usageOf(estimateTokens(promptChars), estimateTokens(delivered)),
        error: { code: error.code, message: error.message },
      });
      out += send("response.failed", { response });
      return out;
    },
  };
}
