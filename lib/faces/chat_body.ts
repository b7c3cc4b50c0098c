/**
 * @module The chat request body, which both faces accept in the same shape (spec §2.1): the chat-completions
 * fields, plus what Ollama's own clients send (`options`, `format`, `think`, `keep_alive`, message `images`).
 * Unknown fields are ignored, as SDKs add new ones over time.
 */
import { z } from "zod";
import { arrayOf } from "./first_issue_array.ts";

/** What Ollama accepts for keep_alive: seconds, or a Go duration such as "5m" or "1h30m". */
const GO_DURATION = /^-?(\d+(\.\d+)?|(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+)$/;

const finite = z.number().refine(Number.isFinite, "must be a finite number");
const int = z.number().int();

/**
 * Token counts a backend is asked for. llama.cpp holds them in 32-bit ints, so a larger value would wrap
 * there; the cap makes it a clear 400 here instead of a backend failure (or an unbounded generation).
 */
const MAX_TOKENS_ASKED = 2_147_483_647;
const tokenCount = int.positive().max(MAX_TOKENS_ASKED);
/**
 * Ollama gives meaning to two negative values only, -1 (no limit) and -2 (fill the context); others are
 * passed through unchecked and come back as nonsense (a negative token count). Zero is refused too: Ollama's
 * runner reads it as "no limit" while OpenAI-compatible servers refuse it, so it means nothing sure.
 */
const numPredict = int.max(MAX_TOKENS_ASKED).refine(
  (n) => n > 0 || n === -1 || n === -2,
  "must be a positive integer, or -1 (no limit) or -2 (fill the context)",
);

const TextPart = z.object({ type: z.literal("text"), text: z.string() });
const ImagePart = z.object({
  type: z.literal("image_url"),
  image_url: z.union([z.string(), z.object({ url: z.string(), detail: z.string().optional() })]),
});
const ContentPart = z.discriminatedUnion("type", [TextPart, ImagePart]);

const ToolCallBody = z.object({
  id: z.string().optional(),
  type: z.literal("function").optional(),
  function: z.object({
    name: z.string().min(1),
    /** A JSON string from chat-completions clients, an object from Ollama clients. */
    arguments: z.union([z.string(), z.record(z.string(), z.unknown())]).optional(),
  }),
});

export const MessageBody = z.object({
  role: z.enum(["system", "developer", "user", "assistant", "tool"]),
  content: z.union([z.string(), arrayOf(ContentPart), z.null()]).optional(),
  images: arrayOf(z.string()).optional(),
  tool_calls: arrayOf(ToolCallBody).optional(),
  tool_call_id: z.string().optional(),
  tool_name: z.string().optional(),
  name: z.string().optional(),
  thinking: z.string().optional(),
  reasoning_content: z.string().optional(),
  reasoning: z.string().optional(),
});
export type MessageBody = z.infer<typeof MessageBody>;

/** Generation options, valid both at the top level and inside format B's `options`. */
const OptionFields = {
  temperature: finite.optional(),
  top_p: finite.optional(),
  top_k: int.optional(),
  min_p: finite.optional(),
  repeat_penalty: finite.optional(),
  presence_penalty: finite.optional(),
  frequency_penalty: finite.optional(),
  seed: int.optional(),
  stop: z.union([z.string(), arrayOf(z.string())]).optional(),
  num_ctx: tokenCount.optional(),
  num_predict: numPredict.optional(),
};
export const OptionsBody = z.object(OptionFields);
export type OptionsBody = z.infer<typeof OptionsBody>;

const ToolBody = z.object({
  type: z.literal("function"),
  function: z.object({
    name: z.string().min(1),
    description: z.string().optional(),
    parameters: z.record(z.string(), z.unknown()).optional(),
  }),
});

const ToolChoiceBody = z.union([
  z.enum(["auto", "none", "required"]),
  z.object({ type: z.literal("function"), function: z.object({ name: z.string().min(1) }) }),
]);

const ResponseFormatBody = z.discriminatedUnion("type", [
  z.object({ type: z.literal("text") }),
  z.object({ type: z.literal("json_object") }),
  z.object({
    type: z.literal("json_schema"),
    json_schema: z.object({
      name: z.string().optional(),
      schema: z.record(z.string(), z.unknown()).optional(),
    }),
  }),
]);

export const ChatBody = z.object({
  model: z.string().optional(),
  messages: arrayOf(MessageBody, 1),
  stream: z.boolean().optional(),
  stream_options: z.object({ include_usage: z.boolean().optional() }).nullable().optional(),
  max_tokens: tokenCount.nullable().optional(),
  max_completion_tokens: tokenCount.nullable().optional(),
  ...OptionFields,
  options: OptionsBody.optional(),
  reasoning_effort: z.enum(["none", "minimal", "low", "medium", "high", "xhigh", "max"]).nullable()
    .optional(),
  think: z.union([z.boolean(), z.enum(["low", "medium", "high", "max"])]).optional(),
  response_format: ResponseFormatBody.optional(),
  format: z.union([z.literal("json"), z.literal(""), z.record(z.string(), z.unknown())]).optional(),
  tools: arrayOf(ToolBody).optional(),
  tool_choice: ToolChoiceBody.optional(),
  keep_alive: z.union([
    finite,
    z.string().regex(GO_DURATION, 'must be a number of seconds or a duration such as "5m"'),
  ])
    .optional(),
});
export type ChatBody = z.infer<typeof ChatBody>;
