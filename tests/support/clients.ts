/** The official clients, pointed at a test gateway. */
import OpenAI from "openai";
import { Ollama } from "ollama";

export function openaiClient(url: string, apiKey: string, base: "/v1" | "/api/v1" = "/v1"): OpenAI {
  return new OpenAI({ apiKey, baseURL: `${url}${base}`, maxRetries: 0 });
}

/** ollama-js always posts to {host}/api/chat; the gateway's format-B path is reached through its fetch option. */
export function ollamaClient(
  url: string,
  apiKey: string,
  path: "/v1/chat.php" | "/api/v1/chat.php" = "/v1/chat.php",
): Ollama {
  return new Ollama({
    host: url,
    headers: { Authorization: `Bearer ${apiKey}` },
    fetch: (input, init) => fetch(String(input).replace(/\/api\/chat$/, path), init),
  });
}
