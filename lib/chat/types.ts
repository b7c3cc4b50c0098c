/**
 * @module The gateway's internal chat form. Faces parse into it and render out of it; backends translate it
 * to their wire format. Nothing here knows a wire format.
 */

export type Role = "system" | "user" | "assistant" | "tool";

export interface ToolCall {
  id?: string;
  name: string;
  arguments: Record<string, unknown>;
}

export interface ChatMessage {
  role: Role;
  content: string;
  /** Bare base64 image data (no data: prefix), already validated. */
  images?: string[];
  /** Reasoning of an earlier assistant turn, sent back in the history. */
  thinking?: string;
  toolCalls?: ToolCall[];
  /** On role "tool": which tool produced this result. */
  toolName?: string;
  toolCallId?: string;
}

export interface ToolDefinition {
  name: string;
  description?: string;
  parameters?: Record<string, unknown>;
}

export type ToolChoice = "auto" | "none" | "required" | { name: string };

/** Thinking: off, on, or on with an effort level. */
export type Think = boolean | "low" | "medium" | "high";

/** Generation options: sampling, limits. Names are the gateway's own. */
export interface GenerationOptions {
  temperature?: number;
  topP?: number;
  topK?: number;
  minP?: number;
  repeatPenalty?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  seed?: number;
  stop?: string[];
  numCtx?: number;
  numPredict?: number;
}

export interface ChatRequest {
  /** The model the client named; replaced by the key's model while shaping. */
  model: string;
  messages: ChatMessage[];
  stream: boolean;
  includeUsage: boolean;
  options: GenerationOptions;
  /** "json" for any JSON, or a JSON Schema object. */
  format?: "json" | Record<string, unknown>;
  think?: Think;
  tools?: ToolDefinition[];
  toolChoice?: ToolChoice;
  /** Seconds, or a duration string such as "5m"; how long the backend keeps the model loaded. */
  keepAlive?: number | string;
}

export type FinishReason = "stop" | "length" | "tool_calls";

/** A complete (non-streamed) answer, as a backend produced it. */
export interface ChatResult {
  /** The model name as the serving backend reported it. */
  model: string;
  content: string;
  thinking?: string;
  toolCalls: ToolCall[];
  finishReason: FinishReason;
  promptTokens: number;
  completionTokens: number;
  /** The counts are the gateway's estimate: the backend's were missing or invalid. */
  estimated?: true;
  /** Backend-side duration in nanoseconds, when the backend reports one. */
  totalDurationNs?: number;
}

/** A piece of a streamed answer, as it arrives from the backend. */
export interface ChatDelta {
  type: "delta";
  content?: string;
  thinking?: string;
  /** Complete tool calls (backends that fragment them are reassembled before they get here). */
  toolCalls?: ToolCall[];
}

/** The end of a streamed answer, with the backend's own counts. */
export interface ChatDone {
  type: "done";
  finishReason: FinishReason;
  promptTokens: number;
  completionTokens: number;
  /** The counts are the gateway's estimate: the backend's were missing or invalid. */
  estimated?: true;
}

export type ChatEvent = ChatDelta | ChatDone;
