/**
 * @module Format B on Ollama's own paths (`/api/chat`, discovery): the same face as `/v1/chat.php`, with
 * the two differences Ollama's own clients rely on. Errors are Ollama's `{"error":"<text>"}` (ollama-js and
 * ollama-python show `error` as the message, so an object there reads `[object Object]`), and `stream`
 * defaults to true, as on Ollama, so the curl lines of Ollama's docs stream as they do there. Usage is
 * recorded as format `ollama`, like the other format-B paths.
 */
import type { GatewayError } from "../errors.ts";
import type { Face } from "./face.ts";
import { ollamaFace } from "./ollama.ts";
import { parseChat } from "./parse_chat.ts";

export function ollamaErrorBody(error: GatewayError) {
  return { error: error.message, code: error.code };
}

export const ollamaApiFace: Face = {
  ...ollamaFace,
  parse(body: unknown) {
    const streamed = typeof body === "object" && body !== null && !Array.isArray(body) && !("stream" in body)
      ? { ...body, stream: true }
      : body;
    return parseChat(streamed);
  },
  errorBody: ollamaErrorBody,
};
