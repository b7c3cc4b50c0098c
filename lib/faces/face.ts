/**
 * @module What a face is: the client-side wire format of the one chat operation. A face parses a body into the
 * internal request and renders results and errors in its own shape; it knows nothing of backends.
 */
import type { ChatEvent, ChatRequest, ChatResult } from "../chat/types.ts";
import type { GatewayError } from "../errors.ts";

export type FaceName = "openai" | "ollama" | "responses" | "anthropic";

export interface RenderContext {
  /** Unique per request; format A shows it as `chatcmpl-<id>`. */
  requestId: string;
  /** When the gateway accepted the request, ms since the epoch. */
  startedAt: number;
  /** When the answer was complete, ms since the epoch. */
  finishedAt: number;
  /** Time from accepting the request to the complete answer, in nanoseconds (monotonic clock). */
  durationNs: number;
  /** The name format-B clients see for the model (the server's alias, else its tag). */
  alias: string;
  /** The request as shaped for the key: what a face that echoes the request's settings shows. */
  request: ChatRequest;
}

export interface StreamContext {
  requestId: string;
  startedAt: number;
  /** The model name as the backend reported it (format A). */
  model: string;
  /** The name format-B clients see. */
  alias: string;
  includeUsage: boolean;
  /** The request as shaped for the key. */
  request: ChatRequest;
  /** Wall clock, ms since the epoch, for per-line timestamps. */
  now: () => number;
  /** Nanoseconds since the request was accepted. */
  elapsedNs: () => number;
}

/** Renders one streamed answer; stateful (it knows what it already sent). */
export interface StreamRenderer {
  readonly contentType: string;
  /** The text for one event ("" when it adds nothing); after `done` it includes the stream's closing. */
  event(event: ChatEvent): string;
  /** The text that ends a broken stream, in place of a clean finish. */
  error(error: GatewayError): string;
}

export interface Face {
  readonly name: FaceName;
  parse(body: unknown): ChatRequest;
  renderResult(result: ChatResult, ctx: RenderContext): unknown;
  errorBody(error: GatewayError): unknown;
  streamRenderer(ctx: StreamContext): StreamRenderer;
}
