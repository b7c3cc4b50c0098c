/**
 * Refusals for a limit as clients meet them, through real HTTP. A token quota used up until its period ends
 * says `x-should-retry: false`, so the official openai client (the version pinned here, and version 6, which
 * sleeps the whole `Retry-After` first) rejects at once instead of sleeping or asking again. A refusal for a
 * quota or a concurrency limit spends no rate-limit slot, whether the gateway knew the quota in memory or
 * decided with the store. Every refusal names its limit and when it lifts, in each client format.
 */
import assert from "node:assert/strict";
import OpenAI from "openai";
import OpenAIv6 from "openai-v6";
import { listKeys, updateKey } from "../lib/store/keys.ts";
import { Scenario, USER_HELLO } from "./harness.ts";
import { A, B, OLLAMA, openStream } from "./support/quota_streams.ts";
import { eventually } from "./support/wait_for.ts";

const PATHS = [A, B, OLLAMA];
/** How long a client may take to give up before the test calls it hanging; the old answer made it hours. */
const HANGING_MS = 10_000;

/** A clock the test moves by hand. */
function clock(iso: string) {
  let t = Date.parse(iso);
  return { now: () => t, set: (next: string) => t = Date.parse(next) };
}

/** A gateway whose backend bills every answer 60 tokens. */
async function metered(now: () => number) {
  const s = await Scenario.start([{ name: "a" }], { now });
  s.fake().reply = () => ({ content: "fine", promptTokens: 25, completionTokens: 35 });
  return s;
}

async function status(res: Response) {
  await res.body?.cancel();
  return res.status;
}

/** A refusal as its client reads it, in the format of the path it came from. */
async function refusal(res: Response, path: string) {
  const body = await res.json();
  return {
    status: res.status,
    code: path === OLLAMA ? body.code : body.error.code,
    message: path === OLLAMA ? body.error : body.error.message,
    retryAfter: res.headers.get("retry-after"),
    shouldRetry: res.headers.get("x-should-retry"),
    remaining: res.headers.get("x-ratelimit-remaining"),
  };
}

/** `promise`, or a failure once `ms` passed: a client that sleeps or retries for hours fails the test. */
async function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: still waiting after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Seconds from `from` to the next midnight UTC. */
const toMidnight = (from: string) => (Date.parse(from.slice(0, 10)) + 86_400_000 - Date.parse(from)) / 1000;

/** Counts the requests a client sends. */
const counted = (count: () => void) => (input: string | URL | Request, init?: RequestInit) => {
  count();
  return fetch(input, init);
};

/** Each client with its default retries: one chat, settled to its answer or its error. */
const CLIENTS = [
  {
    name: "openai (pinned)",
    chat: (apiKey: string, baseURL: string, count: () => void): Promise<unknown> =>
      new OpenAI({ apiKey, baseURL, fetch: counted(count) }).chat.completions
        .create({ model: "x", messages: USER_HELLO }).catch((e: unknown) => e),
    RateLimitError: OpenAI.RateLimitError,
  },
  {
    name: "openai 6",
    chat: (apiKey: string, baseURL: string, count: () => void): Promise<unknown> =>
      new OpenAIv6({ apiKey, baseURL, fetch: counted(count) }).chat.completions
        .create({ model: "x", messages: USER_HELLO }).catch((e: unknown) => e),
    RateLimitError: OpenAIv6.RateLimitError,
  },
] as const;

for (const client of CLIENTS) {
  Deno.test(`${client.name}, default retries: a used-up daily quota rejects at once, asked once, no backend call`, async () => {
    // 55,051 s before midnight UTC: the Retry-After the openai 6 client used to sleep through.
    const at = "2026-11-22T08:42:29Z";
    const t = clock(at);
    await using s = await metered(t.now);
    const secret = await s.gw.key({ dailyTokens: 60 });
    assert.equal(await status(await s.gw.post(A, secret, { messages: USER_HELLO })), 200, "60 of 60 used");

    let asked = 0;
    const started = performance.now();
    const error = await within(HANGING_MS, client.name, client.chat(secret, `${s.gw.url}/v1`, () => asked++));
    const ms = performance.now() - started;
    assert.ok(error instanceof client.RateLimitError, String(error));
    assert.equal(asked, 1, "the client did not ask again");
    assert.equal(error.status, 429);
    assert.equal(error.code, "quota_exceeded");
    assert.match(
      error.message,
      /Daily token quota of this API key is used up \(60 of 60 tokens\); it resets at 2026-11-23T00:00:00\.000Z/,
    );
    assert.equal(error.headers?.get("x-should-retry"), "false");
    assert.equal(error.headers?.get("retry-after"), "55051");
    assert.equal(s.fake().chats.length, 1, "the backend saw only the request that used the quota up");
    assert.deepEqual(s.gw.usage.map((r) => r.errorCode ?? r.status), ["ok", "quota_exceeded"]);
    console.log(`${client.name}: quota refusal rejected after ${Math.round(ms)} ms, ${asked} request`);
  });
}

Deno.test("a quota the gateway knows used up refuses before the rate limit: after 5 refusals the raised quota admits the full rpm", async () => {
  const t = clock("2026-11-22T10:00:30Z");
  await using s = await metered(t.now);
  await s.gw.catalog.users.add({ name: "ana", dailyTokens: 60 });
  await s.gw.deps.view.refresh();
  const secret = await s.gw.key({ user: "ana", rpm: 3 });
  assert.equal(await status(await s.gw.post(A, secret, { messages: USER_HELLO })), 200, "the user's 60 used");

  const at = "2026-11-22T10:01:10Z";
  t.set(at);
  for (let i = 0; i < 5; i++) {
    const path = PATHS[i % PATHS.length];
    const res = await s.gw.post(path, secret, { messages: USER_HELLO });
    assert.equal(res.headers.get("x-ratelimit-remaining"), null, "refused before the rate limit");
    const r = await refusal(res, path);
    assert.deepEqual([r.status, r.code, r.shouldRetry], [429, "quota_exceeded", "false"], path);
    assert.equal(r.retryAfter, String(toMidnight(at)));
    assert.match(
      r.message,
      /^Daily token quota of user "ana" is used up \(60 of 60 tokens\); it resets at 2026-11-23T00:00:00\.000Z$/,
    );
  }

  await s.gw.catalog.users.update("ana", (user) => ({ ...user, dailyTokens: 10_000 }));
  await s.gw.deps.view.refresh();
  const remaining = [];
  for (let i = 0; i < 3; i++) {
    const res = await s.gw.post(PATHS[i], secret, { messages: USER_HELLO });
    remaining.push(res.headers.get("x-ratelimit-remaining"));
    assert.equal(await status(res), 200, `request ${i + 1} of the minute's 3`);
  }
  assert.deepEqual(remaining, ["2", "1", "0"]);
  for (const path of PATHS) {
    const r = await refusal(await s.gw.post(path, secret, { messages: USER_HELLO }), path);
    assert.deepEqual(
      [r.status, r.code, r.retryAfter, r.shouldRetry],
      [429, "rate_limited", "50", null],
      path,
    );
    assert.match(
      r.message,
      /^Rate limit of 3 requests per minute of this API key is reached; it resets at 2026-11-22T10:02:00\.000Z, try again in 50 s$/,
    );
  }
  assert.equal(s.fake().chats.length, 4);
  const refused = s.gw.usage.filter((r) => r.status === "rejected").map((r) => r.errorCode);
  assert.deepEqual(refused, [...Array(5).fill("quota_exceeded"), ...Array(3).fill("rate_limited")]);
});

Deno.test("a quota refusal decided with the store gives the rate-limit slot back: too little left for the prompt", async () => {
  const t = clock("2026-11-22T10:00:30Z");
  await using s = await metered(t.now);
  const secret = await s.gw.key({ dailyTokens: 100, rpm: 3 });
  assert.equal(await status(await s.gw.post(A, secret, { messages: USER_HELLO })), 200, "60 of 100 used");

  const at = "2026-11-22T10:01:10Z";
  t.set(at);
  // About 300 tokens of prompt: more than the 40 left, which this process cannot tell without the store.
  const long = [{ role: "user", content: "many words ".repeat(100) }];
  for (let i = 0; i < 5; i++) {
    const path = PATHS[i % PATHS.length];
    const r = await refusal(await s.gw.post(path, secret, { messages: long }), path);
    assert.deepEqual([r.status, r.code, r.shouldRetry], [429, "quota_exceeded", "false"], path);
    assert.equal(r.retryAfter, String(toMidnight(at)));
    assert.equal(r.remaining, "3", "the slot given back is not counted as taken");
    assert.match(
      r.message,
      /^Daily token quota of this API key has 40 of 100 tokens left, too few for this request, whose prompt alone is about \d+ tokens; it resets at 2026-11-23T00:00:00\.000Z$/,
    );
  }

  const [{ id }] = await listKeys(s.gw.kv);
  await updateKey(s.gw.kv, id, { dailyTokens: 10_000 });
  await s.gw.deps.view.refresh();
  for (let i = 0; i < 3; i++) {
    const res = await s.gw.post(PATHS[i], secret, { messages: long });
    assert.equal(await status(res), 200, `request ${i + 1} of the minute's 3`);
  }
  const r = await refusal(await s.gw.post(B, secret, { messages: USER_HELLO }), B);
  assert.deepEqual([r.code, r.retryAfter], ["rate_limited", "50"]);
  assert.equal(s.fake().chats.length, 4);
});

Deno.test("a concurrency refusal gives the rate-limit slot back, and names the limit and when a place frees", async () => {
  const t = clock("2026-11-22T10:00:10Z");
  await using s = await metered(t.now);
  s.fake().reply = () => ({ content: "tok ".repeat(5000) });
  s.fake().chunkDelayMs = 20;
  const secret = await s.gw.key({ maxConcurrent: 1, rpm: 3 });
  const held = await openStream(s.gw.url, A, secret);
  for (let i = 0; i < 5; i++) {
    const path = PATHS[i % PATHS.length];
    const r = await refusal(await s.gw.post(path, secret, { messages: USER_HELLO }), path);
    assert.deepEqual(
      [r.status, r.code, r.retryAfter, r.shouldRetry, r.remaining],
      [429, "concurrency_limit", "1", null, "2"],
      path,
    );
    assert.match(
      r.message,
      /^This API key already has 1 request\(s\) in progress, its concurrency limit; a place frees when one of them ends, try again in 1 s$/,
    );
  }
  await held.end();
  await eventually("the held stream's record", () => s.gw.usage.some((r) => r.status === "partial"));
  s.fake().reply = () => ({ content: "fine", promptTokens: 25, completionTokens: 35 });
  s.fake().chunkDelayMs = 0;
  for (let i = 0; i < 2; i++) {
    assert.equal(
      await status(await s.gw.post(PATHS[i], secret, { messages: USER_HELLO })),
      200,
      `${i + 2} of 3`,
    );
  }
  const r = await refusal(await s.gw.post(A, secret, { messages: USER_HELLO }), A);
  assert.deepEqual([r.code, r.retryAfter], ["rate_limited", "50"]);
});
