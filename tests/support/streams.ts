/**
 * What a stream that breaks in the middle must look like to clients, whichever kind of backend broke it and
 * whichever path the client streams on: what came before the break, then an error, never a clean finish a
 * client could mistake for a whole answer.
 */
import assert from "node:assert/strict";
import OpenAI from "openai";
import { type TestGateway, USER_HELLO } from "../harness.ts";
import { ollamaClient, openaiClient } from "./clients.ts";

export type FormatBPath = "/v1/chat.php" | "/api/v1/chat.php";
export type StreamPath = "/v1/chat/completions" | FormatBPath | "/api/chat";

/**
 * Streams one chat on `path`, as raw bytes, and checks that it delivered `delivered` and then ended with an
 * error event (format A) or error line (format B and Ollama's /api/chat) and nothing else after it. Returns
 * the error's message.
 */
export async function streamEndsInError(
  gw: TestGateway,
  key: string,
  path: StreamPath,
  delivered: string[],
  label: string,
): Promise<string> {
  const res = await gw.post(path, key, { messages: USER_HELLO, stream: true });
  assert.equal(res.status, 200, `${label}: the stream had begun`);
  const text = await res.text();
  const saw = (piece: string) => text.includes(`"content":${JSON.stringify(piece)}`);
  assert.ok(delivered.every(saw), `${label}: delivered what came before the break: ${text}`);
  if (path === "/v1/chat/completions") {
    assert.ok(!text.includes("[DONE]"), `${label}: no clean finish`);
    assert.ok(!text.includes('"finish_reason":"stop"'), label);
    const last = JSON.parse(text.trimEnd().split("\n\n").at(-1)!.slice("data: ".length));
    assert.equal(typeof last.error?.message, "string", `${label}: ends with an error event`);
    return last.error.message;
  }
  const lines = text.trimEnd().split("\n").map((l) => JSON.parse(l));
  assert.ok(lines.every((l) => l.done !== true), `${label}: no done line`);
  const last = lines.at(-1);
  assert.equal(typeof last.error, "string", `${label}: ends with an error line`);
  return last.error;
}

/** The official clients of both formats must raise a mid-stream error, not end as if the answer were whole. */
export async function assertClientsRaise(
  url: string,
  key: string,
  b: FormatBPath,
  error: RegExp,
): Promise<void> {
  const stream = await openaiClient(url, key).chat.completions.create({
    model: "x",
    messages: USER_HELLO,
    stream: true,
  });
  await assert.rejects(async () => {
    for await (const _ of stream);
  }, (e: unknown) => e instanceof OpenAI.APIError && error.test(e.message));
  await assert.rejects(async () => {
    for await (
      const _ of await ollamaClient(url, key, b).chat({ model: "x", messages: USER_HELLO, stream: true })
    );
  }, error);
}
