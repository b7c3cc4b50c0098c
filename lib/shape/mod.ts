/**
 * @module Shaping: the key's rules rewrite the client's request. It decides what the backend is asked for;
 * it does not know which backend that will be, except through `fitToServer`, which applies the one
 * server-dependent rule (that server's ceilings and its own name for the model).
 *
 * Decisions where the spec is silent:
 * - A key without tools sends no tool history (calls and results are taken out of the messages).
 * - A key without thinking sends `think: false`, because leaving it out lets a thinking model think by default.
 * - An omitted `num_predict` under a ceiling becomes the ceiling (otherwise generation is unbounded). A
 *   negative `num_predict` (unlimited) counts as above any ceiling.
 * - A model server is shared by every key on it, so what it keeps in memory is the operator's to say, not a
 *   client's: a client's `keep_alive` is dropped (0 would unload the model after the request, -1 pin it for
 *   good), leaving the server's own setting (Ollama's OLLAMA_KEEP_ALIVE). A client's `num_ctx` is replaced by
 *   the key's `defaultCtx`, or dropped when the key has none so the server's own context applies: Ollama
 *   reloads a model whenever a request's context differs from the loaded one's, so any client could thrash
 *   it for everyone. Dropped rather than refused: both are hints about the server, not about the answer.
 * - A key that forces JSON promises its clients a JSON object; a client's schema of another top-level type
 *   (a string, an array) would break that promise, so it is refused rather than replaced by plain JSON.
 */
import type { ChatMessage, ChatRequest } from "../chat/types.ts";
import { InvalidRequest } from "../errors.ts";
import type { KeyRecord, ServerRecord } from "../store/records.ts";

export function shapeForKey(request: ChatRequest, key: KeyRecord): ChatRequest {
  const out: ChatRequest = { ...request, model: key.model, options: { ...request.options } };
  // A delete costs even when the key is not there, and most requests carry no tools.
  if (!key.tools) {
    if ("tools" in out) delete out.tools;
    if ("toolChoice" in out) delete out.toolChoice;
  }
  if (!key.thinking) out.think = false;
  if (key.forceJson) {
    if (typeof out.format !== "object") out.format = "json";
    else checkObjectSchema(out.format);
  }
  if (out.keepAlive !== undefined) out.keepAlive = undefined;

  let messages = out.messages;
  if (!key.tools && messages.some((m) => m.role === "tool" || m.toolCalls)) {
    messages = withoutToolHistory(messages);
  }
  if (!key.vision && messages.some((m) => m.images)) {
    messages = messages.map(({ images: _dropped, ...rest }) => rest);
  }
  if (key.systemPrompt) {
    if (key.systemPromptMode === "replace" && messages.some((m) => m.role === "system")) {
      messages = messages.filter((m) => m.role !== "system");
    }
    messages = [{ role: "system", content: key.systemPrompt }, ...messages];
  }
  out.messages = messages;

  out.options.numCtx = key.defaultCtx;
  if (out.options.numPredict === undefined && key.defaultPredict !== undefined) {
    out.options.numPredict = key.defaultPredict;
  }
  return out;
}

/** The top-level type a forced-JSON key accepts in a client's schema: the one JSON objects have. */
function checkObjectSchema(schema: Record<string, unknown>): void {
  const type = schema.type;
  if (type === "object" || (Array.isArray(type) && type.length === 1 && type[0] === "object")) return;
  throw new InvalidRequest(
    `This key answers only in JSON objects: a response schema must have "type": "object" at its top level, ` +
      `got ${type === undefined ? "no type" : JSON.stringify(type).slice(0, 60)}`,
  );
}

/**
 * A key without tools sends no tool history either: tool calls and tool results in a history would let its
 * client tell the model a tool ran, and what it answered. An assistant turn left with nothing is dropped.
 */
function withoutToolHistory(messages: ChatMessage[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const m of messages) {
    if (m.role === "tool") continue;
    if (!m.toolCalls) {
      out.push(m);
      continue;
    }
    const { toolCalls: _calls, ...rest } = m;
    if (rest.content || rest.images?.length || rest.thinking) out.push(rest);
  }
  return out;
}

function lowest(...values: (number | undefined)[]): number | undefined {
  const set = values.filter((v): v is number => v !== undefined);
  return set.length ? Math.min(...set) : undefined;
}

/** The request as one particular server receives it: its tag for the model, within its ceilings. */
export function fitToServer(
  request: ChatRequest,
  key: KeyRecord,
  server: ServerRecord,
  modelTag: string,
): ChatRequest {
  const options = { ...request.options };
  const ctxCeiling = lowest(key.maxCtx, server.maxCtx);
  if (ctxCeiling !== undefined && options.numCtx !== undefined) {
    options.numCtx = Math.min(options.numCtx, ctxCeiling);
  }
  const predictCeiling = lowest(key.maxPredict, server.maxPredict);
  if (predictCeiling !== undefined) {
    const asked = options.numPredict;
    options.numPredict = asked === undefined || asked < 0 ? predictCeiling : Math.min(asked, predictCeiling);
  }
  return { ...request, model: modelTag, options };
}
