/**
 * @module The one place a backend's values are judged. Servers that call themselves Ollama or
 * OpenAI-compatible differ widely in what they send; a value the wire format does not allow (a negative or
 * fractional token count, an unknown finish reason, a number where a name belongs) is treated as missing,
 * counted per server and field, and logged once per server, so nothing after the adapters ever sees it.
 * Only an answer that cannot be understood at all (no message, content that is not text, a tool call without
 * a name) is refused, as a BadGateway.
 *
 * Plain checks rather than a schema: they run on every streamed chunk, on values the adapters have already
 * parsed, and let each field fail alone.
 */
import { estimateTokens } from "../chat/token_estimate.ts";
import type { ChatRequest, ToolCall } from "../chat/types.ts";
import { BadGateway } from "../errors.ts";

/**
 * The largest token count believed. The longest context window of any model is 10M tokens, and one answer
 * cannot count more than its context; 2^24 leaves room above that, while a count beyond it is arithmetic gone
 * wrong (a negative number read as unsigned, an overflow), and one such answer would otherwise use up a
 * month's token quota.
 */
export const MAX_TOKEN_COUNT = 2 ** 24;

/** Model names and tool-call ids longer than this are not names a server gives. */
export const MAX_NAME_LENGTH = 256;

/** The fields whose invalid values are counted: the `field` label of the metric, a closed set. */
export type AnswerField =
  | "prompt_tokens"
  | "completion_tokens"
  | "usage"
  | "duration"
  | "finish_reason"
  | "reasoning"
  | "model"
  | "tool_call_id"
  | "tool_call_index";

/** Where invalid values are counted (the metrics). */
export interface InvalidValueSink {
  invalidBackendValue(server: string, field: AnswerField): void;
}

/** Servers already named in the log by this process. */
const logged = new Set<string>();

function shown(value: unknown): string {
  const text = typeof value === "string" ? JSON.stringify(value) : String(JSON.stringify(value) ?? value);
  return text.length > 60 ? `${text.slice(0, 60)}…` : text;
}

/** Reports the invalid values of one server's answers. */
export class AnswerCheck {
  constructor(
    readonly server: string,
    private readonly sink?: InvalidValueSink,
    private readonly log: (line: string) => void = console.warn,
  ) {}

  /** Notes a value that is not what the wire format allows; the caller then treats it as missing. */
  invalid(field: AnswerField, value: unknown): undefined {
    try {
      this.sink?.invalidBackendValue(this.server, field);
    } catch (error) {
      console.error("gateway: cannot count an invalid backend value:", error);
    }
    if (!logged.has(this.server)) {
      logged.add(this.server);
      this.log(
        `gateway: server "${this.server}" sent an invalid ${field} (${shown(value)}); such values are ` +
          `treated as missing and counted in gateway_backend_invalid_total (logged once per server)`,
      );
    }
    return undefined;
  }

  /** A token count, or undefined when absent or invalid (then reported). */
  count(value: unknown, field: "prompt_tokens" | "completion_tokens"): number | undefined {
    if (value === undefined) return undefined;
    if (Number.isSafeInteger(value) && (value as number) >= 0 && (value as number) <= MAX_TOKEN_COUNT) {
      return value as number;
    }
    return this.invalid(field, value);
  }

  /** A duration in nanoseconds (an integer, as the wire says), or undefined. */
  duration(value: unknown): number | undefined {
    if (value === undefined) return undefined;
    if (Number.isSafeInteger(value) && (value as number) >= 0) return value as number;
    return this.invalid("duration", value);
  }

  /**
   * A name (model, tool-call id): a string of sane length, or undefined. An empty one is absent, not invalid:
   * servers written in Go send "" for a name they do not have.
   */
  name(value: unknown, field: "model" | "tool_call_id"): string | undefined {
    if (value === undefined || value === null || value === "") return undefined;
    if (typeof value === "string" && value.length <= MAX_NAME_LENGTH) return value;
    return this.invalid(field, value);
  }

  /** Reasoning text: a string, or undefined (also for null and an empty string). */
  reasoning(value: unknown): string | undefined {
    if (value === undefined || value === null) return undefined;
    if (typeof value === "string") return value || undefined;
    return this.invalid("reasoning", value);
  }
}

/** Text the answer is made of: a string, or nothing (null or absent); anything else cannot be understood. */
export function textOf(value: unknown, what: string): string {
  if (typeof value === "string") return value;
  if (value === undefined || value === null) return "";
  throw new BadGateway(`The model server sent ${what} that is not text`);
}

/** A JSON object of the answer's structure (a message, a choice); anything else cannot be understood. */
export function objectOf(value: unknown, what: string): Record<string, unknown> {
  if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    return value as Record<string, unknown>;
  }
  throw new BadGateway(`The model server sent ${what} that is not an object`);
}

/** A list of the answer's structure (tool calls), where absent or null is empty. */
export function listOf(value: unknown, what: string): unknown[] {
  if (Array.isArray(value)) return value;
  if (value === undefined || value === null) return [];
  throw new BadGateway(`The model server sent ${what} that is not a list`);
}

/** Characters of the prompt, for an estimate when the backend's count is missing. */
export function promptChars(req: ChatRequest): number {
  let n = 0;
  for (const m of req.messages) n += m.content.length;
  return n;
}

/** Characters of an answer's text, for an estimate of its tokens; as a stream's delivered count reckons them. */
export function answerChars(content: string, thinking: string | undefined, calls: ToolCall[]): number {
  let n = content.length + (thinking?.length ?? 0);
  for (const call of calls) n += call.name.length + JSON.stringify(call.arguments).length;
  return n;
}

/** The answer's token counts: the backend's where valid, else the gateway's estimate, marked as such. */
export function answerTokens(
  prompt: number | undefined,
  completion: number | undefined,
  req: ChatRequest,
  /** Called only when an estimate is needed: it may stringify tool-call arguments. */
  completionChars: () => number,
): { promptTokens: number; completionTokens: number; estimated?: true } {
  if (prompt !== undefined && completion !== undefined) {
    return { promptTokens: prompt, completionTokens: completion };
  }
  return {
    promptTokens: prompt ?? estimateTokens(promptChars(req)),
    completionTokens: completion ?? estimateTokens(completionChars()),
    estimated: true,
  };
}

/**
 * A tool call's arguments as an object: Ollama sends an object, OpenAI-compatible servers a JSON string (some
 * Ollama-likes do too). Arguments that are no JSON object make the call unusable, so the answer with it.
 */
export function toolArguments(value: unknown): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (typeof value === "object" && !Array.isArray(value)) return value as Record<string, unknown>;
  if (typeof value === "string") {
    if (!value.trim()) return {};
    try {
      const parsed = JSON.parse(value);
      if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) return parsed;
    } catch {
      // fall through
    }
  }
  throw new BadGateway("The model server produced tool-call arguments that are not a JSON object");
}

/** A tool call's name: without one the call cannot be made, so the answer cannot be understood. */
export function toolName(value: unknown): string {
  if (typeof value === "string" && value) return value;
  throw new BadGateway("The model server sent a tool call without a name");
}
