/**
 * What a stream that breaks in the middle must look like to clients, whichever kind of backend broke it: the
 * Ollama and the OpenAI-compatible tests hold the gateway to the same promise, so they check it here, once.
 */
import assert from "node:assert/strict";
import OpenAI from "openai";
import { type TestGateway, USER_HELLO } from "../harness.ts";
import { ollamaClient, openaiClient } from "./clients.ts";

const A = "/v1/chat/completions";

type FormatBPath = "/v1/chat.php" | "/api/v1/chat.php";

/**
 * Streams one chat in each format, as raw bytes, and checks that both delivered what came before the break
 * and then ended with an error, never with a clean finish a client could mistake for a whole answer. Returns
 * the format-A error event, for tests that also care what it says.
 */
export async function assertStreamsEndInError(
  gw: TestGateway,
  key: string,
  b: FormatBPath,
  kind: string,
  delivered: string[],
): Promise<{ message: string }> {
  const a = await (await gw.post(A, key, { messages: USER_HELLO, stream: true })).text();
  assert.ok(!a.includes("[DONE]"), `${kind}: no clean finish`);
  assert.ok(!a.includes('"finish_reason":"stop"'), kind);
  assert.ok(
    delivered.every((piece) => a.includes(`"content":${JSON.stringify(piece)}`)),
    `${kind}: delivered what came`,
  );
  const lastEvent = JSON.parse(a.trimEnd().split("\n\n").at(-1)!.slice(6));
  assert.equal(typeof lastEvent.error.message, "string", kind);

  const text = await (await gw.post(b, key, { messages: USER_HELLO, stream: true })).text();
  const lines = text.trimEnd().split("\n").map((l) => JSON.parse(l));
  assert.ok(lines.every((l) => l.done !== true), `${kind}: no done line`);
  assert.equal(typeof lines.at(-1).error, "string", kind);
  return lastEvent.error;
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
