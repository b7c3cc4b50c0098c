/**
 * @module How a streamed answer ended, as the response that sent it tells the request's account.
 */
import type { ChatEvent } from "./types.ts";
import type { GatewayError } from "../errors.ts";

export interface StreamEnd {
  /** The backend's final event, when the answer completed. */
  done?: Extract<ChatEvent, { type: "done" }>;
  /** Why the stream ended early (backend failure, or the client left). */
  error?: GatewayError;
  clientLeft: boolean;
  /** Characters of content, reasoning and tool-call arguments delivered to the client. */
  deliveredChars: number;
  /** ms from the start of the response to its first byte. */
  firstByteAt?: number;
}
