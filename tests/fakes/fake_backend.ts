/**
 * What every fake backend offers, so one test can run against each backend kind. The fakes differ in wire
 * format only; their fault modes, scripting and counters mean the same thing. Kept structural: a fake
 * satisfies it by having these members, without naming it.
 */

export type FakeMode =
  | "ok"
  | "error" // 500 with the server's error body
  | "busy" // 503
  | "not-found" // 404: the model is not on this server
  | "reject" // 400: the request itself is refused
  | "garbage" // 200 with a body that is not JSON
  | "malformed" // 200 with JSON that is not a chat response
  | "hang" // never answers
  | "flood" // 200 with a body that never ends (no length, no line end)
  | "text-only" // refuses images like a model without vision
  | "scripted"; // 200 with `scripted`, byte for byte: whatever a misbehaving server might send

export interface ScriptedReply {
  content?: string;
  thinking?: string;
  toolCalls?: { id?: string; name: string; arguments: Record<string, unknown> }[];
  /** The backend's own finish reason: "stop" or "length". */
  doneReason?: string;
  promptTokens?: number;
  completionTokens?: number;
}

/** An answer sent exactly as given, whatever the request asked for (streamed or not). */
export interface ScriptedBody {
  contentType: string;
  /** Sent one piece per read, so a test decides where the body splits, even inside a character. */
  pieces: (string | Uint8Array)[];
}

/** How a streamed answer goes wrong after `after` answer chunks have been sent. */
export interface StreamFault {
  after: number;
  kind:
    | "crash" // the connection drops
    | "garbage" // a payload that is not JSON
    | "error-line" // the server's own mid-stream failure report
    | "stall" // nothing more is sent, the connection stays open
    | "endless"; // one payload that never ends: bytes without a line or event end, until the client leaves
}

export interface ReceivedChat {
  path: string;
  headers: Headers;
  body: Record<string, unknown>;
}

export interface FakeBackend {
  readonly name: string;
  mode: FakeMode;
  /** Answer for each chat. */
  reply: (body: Record<string, unknown>) => ScriptedReply;
  /** Requests recorded, in order: every chat, and on some fakes other requests too (count chats by `chats`). */
  readonly received: ReceivedChat[];
  /** The chat requests among `received`. */
  readonly chats: ReceivedChat[];
  /** The body of the most recent chat request. */
  readonly last: Record<string, unknown>;
  /** Breaks streamed answers, when set. */
  streamFault?: StreamFault;
  /** What mode "scripted" answers. */
  scripted?: ScriptedBody;
  /** Pause before each streamed chunk, ms. */
  chunkDelayMs: number;
  /** Streamed answers whose connection the client closed before the end. */
  streamsCancelled: number;
  /** Streamed answers sent to the end. */
  streamsCompleted: number;
  /** Bytes sent by "flood" answers and "endless" faults, over all of them. */
  floodBytesSent: number;
  /** Answer chunks handed to the connection so far, over all streams. */
  chunksSent: number;
  /** The models the server lists as carried. */
  models: string[];
  /** Breaks the endpoints a health probe asks: "hang" never answers, "error" answers 500. */
  probeFault?: "hang" | "error";
  /** Requests received per path, chat and probes alike. */
  readonly hits: Map<string, number>;
  /** Chats run at once, the rest waiting in arrival order; unset, no limit. */
  slots?: number;
  /** Pause before a chat's answer begins, once it has a slot, ms. */
  firstByteDelayMs: number;
  /** Chats being answered now, and waiting for a slot. */
  readonly running: number;
  readonly waiting: number;
  /** Stable across pause() and resume(). */
  readonly url: string;
  readonly paused: boolean;
  /** Stops listening: connections are refused until `resume()`. */
  pause(): Promise<void>;
  /** Listens again on the same port. */
  resume(): void;
  close(): Promise<void>;
}
