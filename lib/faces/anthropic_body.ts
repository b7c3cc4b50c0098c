/**
 * @module The body of `POST /v1/messages` (Anthropic's Messages API): system text, user and assistant turns of
 * text, base64 images, tool calls and their results, client tools and the tool choice, the token limit (which
 * Anthropic requires), stop sequences, sampling, thinking and the JSON output format. Block types the gateway
 * cannot serve (URL or file images, documents, server tools) are read so that `anthropic_request.ts` can
 * refuse them by name. Unknown fields are ignored, as SDKs add new ones over time.
 */
import { z } from "zod";
import { arrayOf } from "./first_issue_array.ts";

const finite = z.number().refine(Number.isFinite, "must be a finite number");
/** As on the chat paths: what llama.cpp's 32-bit counts hold (lib/faces/chat_body.ts). */
const tokenCount = z.number().int().positive().max(2_147_483_647);
const jsonObject = z.record(z.string(), z.unknown());

const Text = z.object({ type: z.literal("text"), text: z.string() });

const ImageSource = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("base64"),
    media_type: z.enum(["image/jpeg", "image/png", "image/gif", "image/webp"]),
    data: z.string(),
  }),
  // Read to be refused: the gateway never fetches a URL, and stores no files.
  z.object({ type: z.literal("url") }),
  z.object({ type: z.literal("file") }),
]);
const Image = z.object({ type: z.literal("image"), source: ImageSource });
export type ImageBlock = z.infer<typeof Image>;

const ToolUse = z.object({
  type: z.literal("tool_use"),
  id: z.string().min(1),
  name: z.string().min(1),
  input: jsonObject,
});

const ToolResult = z.object({
  type: z.literal("tool_result"),
  tool_use_id: z.string().min(1),
  content: z.union([z.string(), arrayOf(z.discriminatedUnion("type", [Text, Image]))]).optional(),
  is_error: z.boolean().optional(),
});

/** Reasoning of an earlier turn, sent back; its signature means nothing to another model and is dropped. */
const Thinking = z.object({ type: z.literal("thinking"), thinking: z.string() });
const RedactedThinking = z.object({ type: z.literal("redacted_thinking") });

/** Blocks of Anthropic's own that no chat backend can take: read so the refusal can name them. */
export const UNSERVED_BLOCKS = [
  "document",
  "search_result",
  "server_tool_use",
  "web_search_tool_result",
  "web_fetch_tool_result",
  "code_execution_tool_result",
  "container_upload",
] as const;
const Unserved = z.object({ type: z.enum(UNSERVED_BLOCKS) });

const Block = z.discriminatedUnion("type", [
  Text,
  Image,
  ToolUse,
  ToolResult,
  Thinking,
  RedactedThinking,
  Unserved,
]);
export type Block = z.infer<typeof Block>;

export const MessageBody = z.object({
  role: z.enum(["user", "assistant", "system"]),
  content: z.union([z.string(), arrayOf(Block)]),
});
export type MessageBody = z.infer<typeof MessageBody>;

const Tool = z.object({
  name: z.string().min(1),
  description: z.string().optional(),
  /** Required of a client tool; Anthropic's server tools have none (they are refused by their type). */
  input_schema: jsonObject.optional(),
  /** A client tool's is "custom" or absent; any other is one of Anthropic's server tools. */
  type: z.string().nullable().optional(),
});

const ToolChoice = z.discriminatedUnion("type", [
  z.object({ type: z.literal("auto") }),
  z.object({ type: z.literal("any") }),
  z.object({ type: z.literal("none") }),
  z.object({ type: z.literal("tool"), name: z.string().min(1) }),
]);

const ThinkingConfig = z.discriminatedUnion("type", [
  z.object({ type: z.literal("enabled"), budget_tokens: tokenCount }),
  z.object({ type: z.literal("disabled") }),
  z.object({ type: z.literal("adaptive") }),
  z.object({ type: z.literal("between_tools") }),
]);

const JsonFormat = z.object({ type: z.literal("json_schema"), schema: jsonObject });

export const MessagesBody = z.object({
  model: z.string().optional(),
  max_tokens: tokenCount,
  messages: arrayOf(MessageBody, 1),
  system: z.union([z.string(), arrayOf(Text)]).optional(),
  stream: z.boolean().optional(),
  stop_sequences: arrayOf(z.string()).optional(),
  temperature: finite.optional(),
  top_p: finite.optional(),
  top_k: z.number().int().optional(),
  tools: arrayOf(Tool).optional(),
  tool_choice: ToolChoice.optional(),
  thinking: ThinkingConfig.optional(),
  output_config: z.object({
    effort: z.enum(["low", "medium", "high", "xhigh", "max"]).nullable().optional(),
    format: JsonFormat.nullable().optional(),
  }).optional(),
  /** The structured-outputs beta's name for `output_config.format`. */
  output_format: JsonFormat.nullable().optional(),
});
export type MessagesBody = z.infer<typeof MessagesBody>;
