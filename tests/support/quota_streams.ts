/**
 * @module What the quota and concurrency tests share: long answers, the prompt estimate a bill may exceed its
 * quota by, streams read whole or held open, bursts over every client path, and the check that each answer
 * was served or refused by the quota in its client's format.
 */
import assert from "node:assert/strict";
import { promptEstimate } from "../../lib/policy/token_bounds.ts";
import type { UsageRecord } from "../../lib/usage/types.ts";
import { USER_HELLO } from "../harness.ts";

export const A = "/v1/chat/completions";
export const B = "/v1/chat.php";
export const OLLAMA = "/api/chat";
export const PATHS = [A, B, OLLAMA];

/** 5,000 tokens as the fake counts them, unless the request bounds its output. */
export const LONG_ANSWER = () => ({ content: "tok ".repeat(5000) });

/** What the gateway estimates USER_HELLO's prompt at: the most a bill may exceed its quota by here. */
export const PROMPT = promptEstimate({
  model: "m1",
  messages: USER_HELLO,
  stream: true,
  includeUsage: false,
  options: {},
});

export interface Answer {
  status: number;
  retryAfter: string | null;
  text: string;
}

/** One streamed chat, read to its end. */
export async function streamed(
  base: string,
  path: string,
  secret: string,
  extra: Record<string, unknown> = {},
) {
  const res = await fetch(`${base}${path}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${secret}` },
    body: JSON.stringify({ model: "x", messages: USER_HELLO, stream: true, ...extra }),
  });
  return { status: res.status, retryAfter: res.headers.get("retry-after"), text: await res.text() };
}

/** A stream left open after its first chunk: a request in progress until `end()`. */
export async function openStream(base: string, path: string, secret: string) {
  const res = await fetch(`${base}${path}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${secret}` },
    body: JSON.stringify({ model: "x", messages: USER_HELLO, stream: true }),
  });
  assert.equal(res.status, 200, await (res.status === 200 ? "" : res.text()));
  const reader = res.body!.getReader();
  assert.equal((await reader.read()).done, false);
  return { end: () => reader.cancel() };
}

export const billedOf = (records: UsageRecord[]) =>
  records.reduce((n, r) => n + r.promptTokens + r.completionTokens, 0);

/** Streams at once, cycling over the paths and the secrets given; half ask for at most 20 tokens. */
export function burst(bases: string[], secrets: string[], n: number): Promise<Answer[]> {
  return Promise.all(Array.from({ length: n }, (_, i) =>
    streamed(
      bases[i % bases.length],
      PATHS[i % PATHS.length],
      secrets[i % secrets.length],
      i % 2 ? {} : { max_tokens: 20 },
    )));
}

/** Every answer is a whole stream (200) or the quota's refusal in its client's format. */
export function assertServedOrRefused(answers: Answer[]): void {
  answers.forEach((a, i) => {
    if (a.status === 200) return;
    assert.equal(a.status, 429, a.text);
    const body = JSON.parse(a.text);
    const code = PATHS[i % PATHS.length] === OLLAMA ? body.code : body.error.code;
    assert.equal(code, "quota_exceeded", a.text);
    assert.ok(Number(a.retryAfter) >= 1, `Retry-After ${a.retryAfter}`);
  });
  assert.ok(answers.some((a) => a.status === 200), "some were served");
  assert.ok(answers.some((a) => a.status === 429), "some were refused");
}
