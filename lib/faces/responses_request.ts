/**
 * @module Parses a Responses API body into the internal `ChatRequest`. The gateway keeps no conversation, so
 * what would need one is refused by name with what to send instead; `store` is accepted and answered as false
 * (a client that sets it loses nothing on a single request, and refusing it would break clients that set it
 * by default). `text.format` is the pipeline's JSON mode, `reasoning.effort` its thinking switch.
 */
import { InvalidRequest } from "../errors.ts";
import type { ChatRequest, GenerationOptions, Think } from "../chat/types.ts";
import { ResponsesBody } from "./responses_body.ts";
import { toMessages } from "./responses_input.ts";
import { thinkForEffort } from "./to_chat_request.ts";
import { describeZodError } from "./zod_message.ts";

const STATELESS = "this gateway stores no responses or conversations: send the whole conversation in";

/** Fields that only make sense with stored state, and why each is refused. */
function refuseStateful(body: ResponsesBody): void {
  if (body.previous_response_id) {
    throw new InvalidRequest(
      `Cannot parse request: "previous_response_id" is not supported; ${STATELESS} "input"`,
    );
  }
  if (body.conversation !== undefined && body.conversation !== null) {
    throw new InvalidRequest(`Cannot parse request: "conversation" is not supported; ${STATELESS} "input"`);
  }
  if (body.background) {
    throw new InvalidRequest(
      'Cannot parse request: "background" is not supported: this gateway stores no responses to fetch later;' +
        ' use "stream" instead',
    );
  }
  if (body.prompt !== undefined && body.prompt !== null) {
    throw new InvalidRequest(
      'Cannot parse request: "prompt" (a stored prompt template) is not supported; send "instructions" and "input"',
    );
  }
}

function toThink(reasoning: ResponsesBody["reasoning"]): Think | undefined {
  if (!reasoning) return undefined;
  // Asking for a summary is asking for reasoning.
  if (reasoning.effort == null) return reasoning.summary ? true : undefined;
  return thinkForEffort(reasoning.effort);
}

function toFormat(text: ResponsesBody["text"]): ChatRequest["format"] {
  const format = text?.format;
  if (format?.type === "json_object") return "json";
  if (format?.type === "json_schema") return format.schema;
  return undefined;
}

function toOptions(body: ResponsesBody): GenerationOptions {
  const options: GenerationOptions = {};
  if (typeof body.temperature === "number") options.temperature = body.temperature;
  if (typeof body.top_p === "number") options.topP = body.top_p;
  if (typeof body.max_output_tokens === "number") options.numPredict = body.max_output_tokens;
  return options;
}

export function parseResponses(raw: unknown): ChatRequest {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new InvalidRequest("Cannot parse request: the body must be a JSON object");
  }
  if (!("input" in raw)) {
    throw new InvalidRequest(`Cannot parse request: "input" is required; ${STATELESS} it`);
  }
  // Said here, as a union's failure does not say which of its kinds was meant.
  const input = raw.input;
  if (typeof input !== "string" && !Array.isArray(input)) {
    throw new InvalidRequest('Cannot parse request: "input" must be a string or an array of items');
  }
  if (Array.isArray(input) && !input.length) {
    throw new InvalidRequest('Cannot parse request: "input" must be a non-empty array');
  }
  const parsed = ResponsesBody.safeParse(raw);
  if (!parsed.success) throw new InvalidRequest(`Cannot parse request: ${describeZodError(parsed.error)}`);
  const body = parsed.data;
  refuseStateful(body);

  const messages = toMessages(body);
  if (!messages.length) throw new InvalidRequest('Cannot parse request: "input" holds no message');
  const request: ChatRequest = {
    model: body.model ?? "",
    messages,
    stream: body.stream ?? false,
    // A Responses stream always ends with its usage.
    includeUsage: true,
    options: toOptions(body),
  };
  const format = toFormat(body.text);
  if (format !== undefined) request.format = format;
  const think = toThink(body.reasoning);
  if (think !== undefined) request.think = think;
  if (body.tools?.length) {
    request.tools = body.tools.map((t) => ({
      name: t.name,
      ...(typeof t.description === "string" ? { description: t.description } : {}),
      ...(t.parameters ? { parameters: t.parameters } : {}),
    }));
  }
  const choice = body.tool_choice;
  if (choice) request.toolChoice = typeof choice === "string" ? choice : { name: choice.name };
  return request;
}
