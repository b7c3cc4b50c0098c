/**
 * Chats held open from the client side, as raw bytes, so a test can act while they are mid-answer and then
 * check how each one ended: complete (format A's `[DONE]`, format B's `done` line) or ended with an error.
 */
import assert from "node:assert/strict";

export type Format = "A" | "B";

const PATHS: Record<Format, string> = { A: "/v1/chat/completions", B: "/v1/chat.php" };

export interface OpenChat {
  format: Format;
  /** Resolves once the answer's first words arrived. */
  started: Promise<void>;
  /** The whole body, once the gateway ended it. */
  body: Promise<string>;
}

/** POSTs one chat; `started` follows the first content the client receives. */
export function openChat(url: string, key: string, format: Format, stream = true): OpenChat {
  const started = Promise.withResolvers<void>();
  const body = (async () => {
    const res = await fetch(`${url}${PATHS[format]}`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${key}` },
      body: JSON.stringify({ messages: [{ role: "user", content: "hi" }], stream }),
    });
    let text = "";
    const decoder = new TextDecoder();
    const reader = res.body!.getReader();
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      text += decoder.decode(chunk.value, { stream: true });
      if (text.includes("w0")) started.resolve();
    }
    if (!stream) return JSON.stringify({ status: res.status, body: JSON.parse(text) });
    assert.equal(res.status, 200, text);
    return text;
  })();
  body.then(
    () => started.reject(new Error(`${format}: the answer ended before any content`)),
    (error) => started.reject(error),
  );
  // A chat whose `started` nobody awaits must not fail the test as an unhandled rejection; `body` tells.
  started.promise.catch(() => {});
  return { format, started: started.promise, body };
}

const sseEvents = (text: string) =>
  text.trimEnd().split("\n\n").map((event) => event.replace(/^data: /, "")).map((data) =>
    data === "[DONE]" ? data : JSON.parse(data)
  );

const ndjsonLines = (text: string) => text.trimEnd().split("\n").map((line) => JSON.parse(line));

/** The streamed answer ended normally and carried `content` whole. */
export function assertComplete(format: Format, text: string, content: string): void {
  if (format === "A") {
    const events = sseEvents(text);
    assert.equal(events.at(-1), "[DONE]", text);
    assert.ok(events.every((e) => e === "[DONE]" || !e.error), text);
    const got = events.map((e) => e === "[DONE]" ? "" : e.choices?.[0]?.delta?.content ?? "").join("");
    assert.equal(got, content);
  } else {
    const lines = ndjsonLines(text);
    assert.equal(lines.at(-1).done, true, text);
    assert.ok(lines.every((l) => l.error === undefined), text);
    assert.equal(lines.map((l) => l.message?.content ?? "").join(""), content);
  }
}

/** The streamed answer delivered some words, then ended with the face's error form, never a clean finish. */
export function assertEndedWithError(format: Format, text: string, pattern: RegExp): void {
  assert.ok(text.includes("w0"), `${format}: words came before the end`);
  if (format === "A") {
    const events = sseEvents(text);
    assert.ok(!events.includes("[DONE]"), text);
    assert.match(events.at(-1).error.message, pattern);
  } else {
    const lines = ndjsonLines(text);
    assert.ok(lines.every((l) => l.done !== true), text);
    assert.match(lines.at(-1).error, pattern);
  }
}

/** Resolves once nothing listens on `url`'s port any more; throws if that takes longer than `limitMs`. */
export async function waitUntilRefused(url: string, limitMs = 15_000): Promise<void> {
  const { hostname, port } = new URL(url);
  const deadline = Date.now() + limitMs;
  while (Date.now() < deadline) {
    try {
      (await Deno.connect({ hostname, port: Number(port) })).close();
    } catch (error) {
      if (error instanceof Deno.errors.ConnectionRefused) return;
      // Reset: the connection sat in the queue of a listener that was closing; look again.
      if (!(error instanceof Deno.errors.ConnectionReset)) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`${url} still accepted connections after ${limitMs} ms`);
}

/** Polls `check` every 25 ms until it holds; throws with `what` if it does not within `limitMs`. */
export async function waitFor(what: string, check: () => boolean, limitMs = 30_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Ends a test's child process for sure (a failed test must not leave it running), if not gone already. */
export async function killChild(child: Deno.ChildProcess): Promise<void> {
  try {
    child.kill("SIGKILL");
  } catch {
    // Already exited.
  }
  await child.status;
}
