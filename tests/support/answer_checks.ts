/**
 * What a client may receive when a backend misbehaved: a 200 with a well-formed answer in its format (a stream
 * ending cleanly or with the format's error ending), or a 502 in the format's error shape. Returns the token
 * counts the client was shown, when it was shown any, so a test can compare them with what was billed.
 */
import assert from "node:assert/strict";
import type { FaceLetter } from "./hostile_faces.ts";

export interface ClientCounts {
  /** Prompt and completion tokens as the answer showed them. */
  counts?: [number, number];
}

const isCount = (n: unknown) => Number.isSafeInteger(n) && (n as number) >= 0;

function parse(text: string, where: string): Record<string, unknown> {
  try {
    const value = JSON.parse(text);
    assert.ok(
      value && typeof value === "object" && !Array.isArray(value),
      `${where}: not an object: ${text}`,
    );
    return value;
  } catch (error) {
    if (error instanceof assert.AssertionError) throw error;
    assert.fail(`${where}: not JSON: ${text.slice(0, 300)}`);
  }
}

function assertBadGateway(body: Record<string, unknown>, face: FaceLetter, where: string): void {
  const error = body.error as Record<string, unknown>;
  assert.equal(error?.code, "bad_gateway", `${where}: ${JSON.stringify(body)}`);
  assert.equal(error.type, face === "A" ? "api_error" : "proxy_error", where);
  assert.ok(typeof error.message === "string" && error.message, where);
}

function countsOf(prompt: unknown, completion: unknown, where: string): [number, number] {
  assert.ok(isCount(prompt) && isCount(completion), `${where}: counts ${prompt}, ${completion}`);
  return [prompt as number, completion as number];
}

function wholeAnswer(body: Record<string, unknown>, face: FaceLetter, where: string): ClientCounts {
  if (face === "A") {
    assert.equal(body.object, "chat.completion", where);
    const usage = body.usage as Record<string, number>;
    assert.equal(usage.total_tokens, usage.prompt_tokens + usage.completion_tokens, where);
    const choice = (body.choices as Record<string, unknown>[])[0];
    assert.ok(["stop", "length", "tool_calls"].includes(choice.finish_reason as string), where);
    assert.equal(typeof body.model, "string", where);
    return { counts: countsOf(usage.prompt_tokens, usage.completion_tokens, where) };
  }
  assert.equal(body.done, true, where);
  assert.ok(["stop", "length"].includes(body.done_reason as string), where);
  return { counts: countsOf(body.prompt_eval_count, body.eval_count, where) };
}

function sseAnswer(text: string, where: string): ClientCounts {
  assert.ok(text.endsWith("\n\n"), `${where}: unterminated event`);
  const events = text.slice(0, -2).split("\n\n");
  const out: ClientCounts = {};
  for (const [i, event] of events.entries()) {
    assert.ok(event.startsWith("data: "), `${where}: ${event}`);
    const data = event.slice(6);
    const last = i === events.length - 1;
    if (data === "[DONE]") {
      assert.ok(last, `${where}: [DONE] before the end`);
      continue;
    }
    const chunk = parse(data, where);
    if (chunk.error !== undefined) {
      assert.ok(last, `${where}: an error event before the end`);
      assertBadGateway(chunk, "A", where);
      continue;
    }
    assert.ok(!last, `${where}: the stream ended without [DONE] or an error`);
    assert.equal(chunk.object, "chat.completion.chunk", where);
    const usage = chunk.usage as Record<string, number> | undefined;
    if (usage) {
      assert.equal(usage.total_tokens, usage.prompt_tokens + usage.completion_tokens, where);
      out.counts = countsOf(usage.prompt_tokens, usage.completion_tokens, where);
    }
  }
  return out;
}

function ndjsonAnswer(text: string, where: string): ClientCounts {
  assert.ok(text.endsWith("\n"), `${where}: unterminated line`);
  const lines = text.slice(0, -1).split("\n");
  for (const [i, line] of lines.entries()) {
    const body = parse(line, where);
    const last = i === lines.length - 1;
    if (!last) {
      assert.equal(body.done, false, where);
      assert.ok(!("error" in body), where);
      continue;
    }
    if ("error" in body) {
      assert.equal(typeof body.error, "string", where);
      return {};
    }
    return wholeAnswer(body, "B", where);
  }
  return {};
}

export async function checkAnswer(
  res: Response,
  face: FaceLetter,
  stream: boolean,
  where: string,
): Promise<ClientCounts> {
  const text = await res.text();
  assert.ok(
    res.status === 200 || res.status === 502,
    `${where}: answered ${res.status}: ${text.slice(0, 300)}`,
  );
  if (res.status === 502 || !stream) {
    assert.match(res.headers.get("content-type") ?? "", /^application\/json/, where);
    const body = parse(text, where);
    if (res.status === 502) {
      assertBadGateway(body, face, where);
      return {};
    }
    return wholeAnswer(body, face, where);
  }
  return face === "A" ? sseAnswer(text, where) : ndjsonAnswer(text, where);
}
