/**
 * @module An answer's text as a fake backend streams it: its token count, the pieces it is sent in, and the
 * plan of one streamed answer in a wire format.
 */

/** Token counts a fake reports when the reply does not script them. */
export const words = (s: string) => s.split(/\s+/).filter(Boolean).length;

/** The pieces a text is streamed in, as a model emits it: a word with the space after it. */
export const pieces = (s: string): string[] => s.match(/\S+\s*/g) ?? [];

/** One streamed answer in its wire format, for `FakeBackendBase.streamed` to send. */
export interface StreamPlan {
  contentType: string;
  /** Framing before the first answer chunk: neither counted nor a place a fault strikes. */
  opening?: string;
  /** The answer chunks, as sent: what `chunksSent` counts and `streamFault.after` refers to. */
  chunks: string[];
  /** What ends a complete answer (final line, or finish, usage and end marker), each piece on its own. */
  closing: string[];
  /** What a "garbage" or an "error-line" stream fault sends before the stream ends. */
  faults: Record<"garbage" | "error-line", string[]>;
}
