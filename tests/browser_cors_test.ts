/**
 * A web page in a real headless Chromium calls the gateway on another origin with a key restricted to the
 * page's site: it reads a whole answer and a stream, and the stream's words as they come. The same page
 * served from an origin outside the key's list cannot read anything.
 */
import assert from "node:assert/strict";
import { Scenario } from "./harness.ts";
import { HeadlessChromium } from "./support/browser.ts";
import { within } from "./support/wait_for.ts";

/** A page server on loopback: the page itself is empty, the test runs its script with page.evaluate. */
function pageServer(): Deno.HttpServer<Deno.NetAddr> {
  return Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () =>
      new Response("<!doctype html><title>app</title>", {
        headers: { "Content-Type": "text/html; charset=utf-8" },
      }),
  );
}

/** Runs in the page: a whole answer in format A, then a stream in format B read to its end. */
async function callGateway([gateway, key]: [string, string]) {
  const headers = { Authorization: `Bearer ${key}`, "Content-Type": "application/json" };
  const messages = [{ role: "user", content: "hi" }];
  try {
    const whole = await fetch(`${gateway}/v1/chat/completions`, {
      method: "POST",
      headers,
      body: JSON.stringify({ model: "x", messages }),
    });
    const answer = (await whole.json()).choices[0].message.content;
    const remaining = whole.headers.get("X-RateLimit-Remaining");
    const streamed = await fetch(`${gateway}/api/chat`, {
      method: "POST",
      headers,
      body: JSON.stringify({ model: "x", messages, stream: true }),
    });
    const text = await streamed.text();
    const lines = text.trim().split("\n").map((line) => JSON.parse(line));
    const content = lines.map((l) => l.message?.content ?? "").join("");
    return { ok: true, answer, remaining, content, done: lines.at(-1).done };
  } catch (error) {
    return { ok: false, error: String(error) };
  }
}

/**
 * Runs in the page: starts a stream in format B and reads until its first line has come, then stops reading.
 * The backend sends its first word and then nothing until the test ends, so only a stream that reaches the
 * page as it is produced can get here.
 */
async function firstLine([gateway, key]: [string, string]) {
  const streamed = await fetch(`${gateway}/api/chat`, {
    method: "POST",
    headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
    body: JSON.stringify({ model: "x", messages: [{ role: "user", content: "hi" }], stream: true }),
  });
  const reader = streamed.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    text += value;
  }
  await reader.cancel();
  return JSON.parse(text.slice(0, text.indexOf("\n")));
}

Deno.test("a page on an allowed origin reads answers and streams; one on another origin cannot", async () => {
  await using s = await Scenario.start();
  s.fake().reply = () => ({ content: "hello from the model" });
  const pages = pageServer();
  // A site is its host and port: the page's own port is named, as an admin names a dev server's.
  const key = await s.gw.key({ allowDomains: [`localhost:${pages.addr.port}`], rpm: 10 });
  const chrome = await HeadlessChromium.launch();
  try {
    const context = await chrome.browser.newContext();
    const page = await context.newPage();
    const port = pages.addr.port;

    // http://localhost:P and http://127.0.0.1:P are two origins, and the gateway on its own port a third.
    await page.goto(`http://localhost:${port}/`);
    const allowed = await page.evaluate(callGateway, [s.gw.url, key] as [string, string]);
    assert.deepEqual(allowed, {
      ok: true,
      answer: "hello from the model",
      remaining: "9",
      content: "hello from the model",
      done: true,
    });

    // The backend holds back everything after its first word: a gateway or a CORS layer that collected the
    // stream before passing it on would leave the page waiting here.
    s.fake().streamFault = { after: 1, kind: "stall" };
    const first = await within(
      "the page to read the first line of a stream whose end is held back",
      page.evaluate(firstLine, [s.gw.url, key] as [string, string]),
    );
    assert.deepEqual([first.message.content, first.done], ["hello ", false]);
    s.fake().streamFault = undefined;

    const served = s.fake().chats.length;
    await page.goto(`http://127.0.0.1:${port}/`);
    const refused = await page.evaluate(callGateway, [s.gw.url, key] as [string, string]);
    assert.equal(refused.ok, false);
    assert.match(refused.error ?? "", /TypeError: Failed to fetch/);
    assert.equal(s.fake().chats.length, served, "the key's domain list refused it before any backend");
    await context.close();
  } finally {
    await chrome.close();
    await pages.shutdown();
  }
});
