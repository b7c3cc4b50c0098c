/**
 * @module What the OpenAI fake reads from a conversation's messages: their text, whether an image is among
 * them, and what the OpenAI API refuses in their tool history.
 */

type Json = Record<string, unknown>;

/** Text of a message whether its content is a string or a list of parts. */
export function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((p) => (p?.type === "text" && typeof p.text === "string" ? p.text : "")).join(" ");
}

export function hasImagePart(messages: Json[]): boolean {
  return messages.some((m) => Array.isArray(m.content) && m.content.some((p) => p?.type === "image_url"));
}

/**
 * What the OpenAI API (and vLLM's request validation, for the arguments) refuses in a conversation's tool
 * history: arguments that are not a JSON string, and a tool result that answers no call of the assistant
 * turn before it. Chat templates pair results with calls by these ids.
 */
export function historyProblem(messages: Json[]): string | undefined {
  let open = new Set<string>();
  for (const [i, m] of messages.entries()) {
    if (m.role === "assistant" && Array.isArray(m.tool_calls)) {
      open = new Set();
      for (const [j, call] of (m.tool_calls as Json[]).entries()) {
        const fn = call.function as Json | undefined;
        if (typeof fn?.arguments !== "string") {
          return `messages[${i}].tool_calls[${j}].function.arguments: Input should be a valid string`;
        }
        if (typeof call.id !== "string" || !call.id) return `messages[${i}].tool_calls[${j}].id is required`;
        open.add(call.id);
      }
    } else if (m.role === "tool") {
      if (typeof m.tool_call_id !== "string" || !open.delete(m.tool_call_id)) {
        return `messages[${i}]: a message with role 'tool' must respond to a preceding 'tool_calls' entry ` +
          `by its tool_call_id (got ${JSON.stringify(m.tool_call_id ?? null)})`;
      }
    }
  }
  return undefined;
}
