/**
 * @module The body of `POST /v1/responses` (OpenAI's Responses API) as far as a gateway that stores nothing can
 * serve it: `input` as text or items (messages, function calls and their outputs, reasoning sent back), the
 * instructions, function tools, the token limit, sampling, the text format and reasoning. The fields that need
 * stored state (`previous_response_id`, `conversation`, `background`, `prompt`) are read so that
 * `responses_request.ts` can refuse them by name. Unknown fields are ignored, as SDKs add new ones over time.
 */
import { z } from "zod";
import { arrayOf } from "./first_issue_array.ts";

const finite = z.number().refine(Number.isFinite, "must be a finite number");
/** As on the chat paths: what llama.cpp's 32-bit counts hold (lib/faces/chat_body.ts). */
const tokenCount = z.number().int().positive().max(2_147_483_647);

const Text = z.object({ type: z.enum(["input_text", "output_text"]), text: z.string() });
const Refusal = z.object({ type: z.literal("refusal"), refusal: z.string() });
const Image = z.object({
  type: z.literal("input_image"),
  image_url: z.string().nullable().optional(),
  file_id: z.string().nullable().optional(),
  detail: z.string().nullable().optional(),
});
/** Read so its refusal can say what is missing; never forwarded. */
const File = z.object({ type: z.literal("input_file") });

const ContentPart = z.discriminatedUnion("type", [Text, Refusal, Image, File]);
export type ContentPart = z.infer<typeof ContentPart>;

const Message = z.object({
  type: z.literal("message"),
  role: z.enum(["user", "assistant", "system", "developer"]),
  content: z.union([z.string(), arrayOf(ContentPart)]),
});

const FunctionCall = z.object({
  type: z.literal("function_call"),
  call_id: z.string().min(1),
  name: z.string().min(1),
  arguments: z.string(),
});

const FunctionCallOutput = z.object({
  type: z.literal("function_call_output"),
  call_id: z.string().min(1),
  output: z.union([z.string(), arrayOf(ContentPart)]),
});

const Reasoning = z.object({
  type: z.literal("reasoning"),
  summary: arrayOf(z.object({ type: z.literal("summary_text"), text: z.string() })),
  content: arrayOf(z.object({ type: z.literal("reasoning_text"), text: z.string() })).nullable().optional(),
});

/** An item that only names a stored one: refused, with the reason, by responses_input.ts. */
const ItemReference = z.object({ type: z.literal("item_reference"), id: z.string() });

const InputItem = z.discriminatedUnion("type", [
  Message,
  FunctionCall,
  FunctionCallOutput,
  Reasoning,
  ItemReference,
]);
export type InputItem = z.infer<typeof InputItem>;

/**
 * An item without `type` is a message when it has a role (the SDKs' short form) and an item reference when it
 * has only an id, as the API reads them.
 */
function withItemType(item: unknown): unknown {
  if (typeof item !== "object" || item === null || Array.isArray(item) || "type" in item) return item;
  if ("role" in item) return { ...item, type: "message" };
  if ("id" in item) return { ...item, type: "item_reference" };
  return item;
}

const FunctionTool = z.object({
  type: z.literal("function"),
  name: z.string().min(1),
  description: z.string().nullable().optional(),
  parameters: z.record(z.string(), z.unknown()).nullable().optional(),
  strict: z.boolean().nullable().optional(),
});

const ToolChoice = z.union([
  z.enum(["auto", "none", "required"]),
  z.object({ type: z.literal("function"), name: z.string().min(1) }),
]);

const TextFormat = z.discriminatedUnion("type", [
  z.object({ type: z.literal("text") }),
  z.object({ type: z.literal("json_object") }),
  z.object({
    type: z.literal("json_schema"),
    name: z.string().optional(),
    schema: z.record(z.string(), z.unknown()),
    description: z.string().nullable().optional(),
    strict: z.boolean().nullable().optional(),
  }),
]);

export const ResponsesBody = z.object({
  model: z.string().optional(),
  input: z.union([z.string(), arrayOf(z.preprocess(withItemType, InputItem), 1)]),
  instructions: z.string().nullable().optional(),
  tools: arrayOf(FunctionTool).nullable().optional(),
  tool_choice: ToolChoice.nullable().optional(),
  parallel_tool_calls: z.boolean().nullable().optional(),
  max_output_tokens: tokenCount.nullable().optional(),
  temperature: finite.nullable().optional(),
  top_p: finite.nullable().optional(),
  text: z.object({ format: TextFormat.nullable().optional() }).nullable().optional(),
  reasoning: z.object({
    effort: z.enum(["none", "minimal", "low", "medium", "high", "xhigh", "max"]).nullable().optional(),
    summary: z.enum(["auto", "concise", "detailed"]).nullable().optional(),
  }).nullable().optional(),
  stream: z.boolean().nullable().optional(),
  store: z.boolean().nullable().optional(),
  previous_response_id: z.string().nullable().optional(),
  conversation: z.unknown().optional(),
  background: z.boolean().nullable().optional(),
  prompt: z.unknown().optional(),
});
export type ResponsesBody = z.infer<typeof ResponsesBody>;
