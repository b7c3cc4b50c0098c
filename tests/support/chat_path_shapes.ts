/**
 * @module The chat paths a stopping gateway refuses on: each path's error shape and usage format, and a
 * streamed chat body each accepts.
 */

/**
 * The error shapes of spec §7 (A, B), of Ollama's own paths and of Anthropic's Messages API; the Responses
 * API's errors are A's, its streams its own.
 */
export type Shape = "A" | "B" | "ollama" | "anthropic" | "responses";

/** Every chat path and the shape it speaks; checked against the route manifest below. */
export const CHAT_PATHS: readonly { path: string; shape: Shape; format: string }[] = [
  { path: "/v1/chat/completions", shape: "A", format: "openai" },
  { path: "/api/v1/chat/completions", shape: "A", format: "openai" },
  { path: "/v1/chat/completions.php", shape: "A", format: "openai" },
  { path: "/api/v1/chat/completions.php", shape: "A", format: "openai" },
  { path: "/v1/chat.php", shape: "B", format: "ollama" },
  { path: "/api/v1/chat.php", shape: "B", format: "ollama" },
  { path: "/api/chat", shape: "ollama", format: "ollama" },
  { path: "/v1/messages", shape: "anthropic", format: "anthropic" },
  { path: "/api/v1/messages", shape: "anthropic", format: "anthropic" },
  { path: "/v1/responses", shape: "responses", format: "responses" },
  { path: "/api/v1/responses", shape: "responses", format: "responses" },
];

export const shapeOf = (path: string) => CHAT_PATHS.find((c) => c.path === path)!.shape;
export const formatOf = (path: string) => CHAT_PATHS.find((c) => c.path === path)!.format;

export const SHAPE_OF_FACE: Record<string, Shape> = {
  openai: "A",
  ollama: "B",
  ollama_api: "ollama",
  anthropic: "anthropic",
  responses: "responses",
};

const CHAT = JSON.stringify({ model: "m1", messages: [{ role: "user", content: "hi" }], stream: true });
/** Anthropic's body needs its token limit. */
const MESSAGES = JSON.stringify({
  model: "m1",
  max_tokens: 64,
  messages: [{ role: "user", content: "hi" }],
  stream: true,
});
const RESPONSES = JSON.stringify({ model: "m1", input: "hi", stream: true });
export const bodyFor = (path: string) => {
  const shape = shapeOf(path);
  return shape === "anthropic" ? MESSAGES : shape === "responses" ? RESPONSES : CHAT;
};
