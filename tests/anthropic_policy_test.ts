/**
 * /v1/messages under the same policies as the chat paths: every toggle and ceiling of the key decides what the
 * backend is asked, whatever the Anthropic body asked for; limits refuse with Anthropic's error types, which
 * its SDK raises as its own classes (a quota only its reset lifts is not retried); a failing server is left
 * for the next one before the first byte; a page may send Anthropic's headers.
 */
import assert from "node:assert/strict";
import Anthropic from "@anthropic-ai/sdk";
import type { KeyPolicy } from "../lib/store/records.ts";
import { Scenario } from "./harness.ts";
import { anthropicClient, PNG, sseEvents } from "./support/anthropic_clients.ts";

type Json = Record<string, unknown>;

/** A body that asks for everything a key may allow or bound. */
const GREEDY = {
  model: "claude-any",
  max_tokens: 4000,
  system: "Client system text.",
  thinking: { type: "enabled", budget_tokens: 2000 },
  tools: [{ name: "lookup", input_schema: { type: "object" } }],
  tool_choice: { type: "any" },
  messages: [{
    role: "user",
    content: [
      { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } },
      { type: "text", text: "What is this?" },
    ],
  }],
};

interface Row {
  name: string;
  policy: Partial<KeyPolicy>;
  body?: Json;
  /** What the backend must have been asked. */
  check(asked: Json): void;
}

const options = (asked: Json) => asked.options as Json;
const messages = (asked: Json) => asked.messages as Json[];

const ROWS: Row[] = [
  {
    name: "all allowed: tools, thinking and the image go through, max_tokens as asked",
    policy: { tools: true, thinking: true, vision: true },
    check: (asked) => {
      assert.deepEqual((asked.tools as Json[]).map((t) => (t.function as Json).name), ["lookup"]);
      assert.equal(asked.think, true);
      assert.deepEqual(messages(asked)[1].images, [PNG]);
      assert.equal(options(asked).num_predict, 4000);
      assert.equal(asked.format, undefined);
    },
  },
  {
    name: "tools off: no tools reach the backend",
    policy: { thinking: true, vision: true },
    check: (asked) => assert.equal(asked.tools, undefined),
  },
  {
    name: "thinking off: the backend is told not to think, though the body enabled it",
    policy: { tools: true, vision: true },
    check: (asked) => assert.equal(asked.think, false),
  },
  {
    name: "thinking disabled by the body: the backend is told not to think, though the key allows it",
    policy: { thinking: true },
    body: { thinking: { type: "disabled" } },
    check: (asked) => assert.equal(asked.think, false),
  },
  {
    name: "an effort with thinking becomes the thinking level (xhigh and max are high)",
    policy: { thinking: true },
    body: { thinking: { type: "adaptive" }, output_config: { effort: "max" } },
    check: (asked) => assert.equal(asked.think, "high"),
  },
  {
    name: "vision off: the image is dropped, the text kept",
    policy: { tools: true, thinking: true },
    check: (asked) => assert.deepEqual(messages(asked)[1], { role: "user", content: "What is this?" }),
  },
  {
    name: "force-JSON: the backend is asked for JSON",
    policy: { forceJson: true },
    check: (asked) => assert.equal(asked.format, "json"),
  },
  {
    name: "a JSON schema the body asks for (output_config.format) is passed on, also under force-JSON",
    policy: { forceJson: true },
    body: { output_config: { format: { type: "json_schema", schema: { type: "object" } } } },
    check: (asked) => assert.deepEqual(asked.format, { type: "object" }),
  },
  {
    name: "the key's system prompt comes first, before the client's",
    policy: { systemPrompt: "Gateway rules." },
    check: (asked) =>
      assert.deepEqual(messages(asked).slice(0, 2), [
        { role: "system", content: "Gateway rules." },
        { role: "system", content: "Client system text." },
      ]),
  },
  {
    name: "the key's output ceiling bounds max_tokens",
    policy: { maxPredict: 500 },
    check: (asked) => assert.equal(options(asked).num_predict, 500),
  },
  {
    name: "the key's default context is sent, within its context ceiling",
    policy: { defaultCtx: 8192, maxCtx: 4096 },
    check: (asked) => assert.equal(options(asked).num_ctx, 4096),
  },
  {
    name: "sampling and stop sequences are passed on",
    policy: {},
    body: { temperature: 0.1, top_p: 0.5, top_k: 7, stop_sequences: ["END", "STOP"] },
    check: (asked) =>
      assert.deepEqual(options(asked), {
        num_predict: 4000,
        temperature: 0.1,
        top_p: 0.5,
        top_k: 7,
        stop: ["END", "STOP"],
      }),
  },
];

for (const row of ROWS) {
  Deno.test(`messages policy: ${row.name}`, async () => {
    await using s = await Scenario.start();
    const key = await s.gw.key(row.policy);
    for (const stream of [false, true]) {
      const res = await s.gw.post("/v1/messages", key, { ...GREEDY, ...row.body, stream });
      assert.equal(res.status, 200, await res.clone().text());
      await res.text();
      row.check(s.fake().last);
      assert.equal(s.fake().last.model, "m1", "the key's model, whatever the body named");
    }
    assert.equal(s.gw.usage.length, 2);
  });
}

Deno.test("messages limits: rate limit and used-up quota are rate_limit_errors, an expired key a permission_error", async () => {
  await using s = await Scenario.start();
  s.fake().reply = () => ({ content: "fine", promptTokens: 25, completionTokens: 35 });
  const params = { model: "x", max_tokens: 50, messages: [{ role: "user" as const, content: "hi" }] };

  const limited = anthropicClient(s.gw.url, await s.gw.key({ rpm: 1 }));
  await limited.messages.create(params);
  await assert.rejects(
    limited.messages.create(params),
    (e: unknown) =>
      e instanceof Anthropic.RateLimitError && e.type === "rate_limit_error" &&
      e.errorCode === "rate_limited" &&
      e.headers.get("retry-after") !== null && e.headers.get("x-ratelimit-limit") === "1",
  );

  // A quota only its reset lifts: the SDK, with its default retries, asks once and gives up.
  const quota = await s.gw.key({ dailyTokens: 50 });
  await anthropicClient(s.gw.url, quota).messages.create(params);
  const before = s.fake().chats.length;
  const patient = new Anthropic({ apiKey: quota, baseURL: s.gw.url });
  await assert.rejects(
    patient.messages.create(params),
    (e: unknown) =>
      e instanceof Anthropic.RateLimitError && e.errorCode === "quota_exceeded" &&
      e.headers.get("x-should-retry") === "false" && /Daily token quota/.test(e.apiMessage ?? ""),
  );
  assert.equal(s.fake().chats.length, before);
  assert.equal(
    s.gw.usage.filter((r) => r.errorCode === "quota_exceeded").length,
    1,
    "asked once, not retried",
  );

  const expired = anthropicClient(s.gw.url, await s.gw.key({ expiresAt: "2020-01-01T00:00:00Z" }));
  await assert.rejects(
    expired.messages.create(params),
    (e: unknown) =>
      e instanceof Anthropic.PermissionDeniedError && e.type === "permission_error" &&
      e.errorCode === "key_expired",
  );
  assert.ok(s.gw.usage.every((r) => r.format === "anthropic"));
});

Deno.test("messages routing: a failing server is left for the next before the first byte; none left is overloaded_error", async () => {
  await using s = await Scenario.start([{ name: "a", weight: 100 }, { name: "b", weight: 1 }], {
    random: () => 0.5,
  });
  const key = await s.gw.key();
  s.fake("a").mode = "error";
  s.fake("b").reply = () => ({ content: "from b" });
  const client = anthropicClient(s.gw.url, key);
  const params = { model: "x", max_tokens: 50, messages: [{ role: "user" as const, content: "hi" }] };
  const whole = await client.messages.create(params);
  assert.deepEqual(whole.content, [{ type: "text", text: "from b" }]);
  const streamed = await client.messages.stream(params).finalMessage();
  assert.deepEqual(streamed.content, [{ type: "text", text: "from b" }]);
  assert.equal(s.fake("a").chats.length, 2, "a was tried first each time");
  assert.deepEqual(s.gw.usage.map((r) => [r.server, r.status]), [["b", "ok"], ["b", "ok"]]);

  s.fake("b").mode = "error";
  const res = await s.gw.post("/v1/messages", key, { ...params, stream: true });
  assert.equal(res.status, 503);
  const body = await res.json();
  assert.equal(body.type, "error");
  assert.equal(body.error.type, "overloaded_error");
  assert.doesNotMatch(body.error.message, /127\.0\.0\.1|http:/, "no backend address");
});

Deno.test("messages CORS: a page's preflight may send x-api-key and Anthropic's headers, and its answer is readable", async () => {
  await using s = await Scenario.start([{ name: "a" }], { config: { corsOrigins: ["https://app.example"] } });
  const key = await s.gw.key();
  for (const asked of ["x-api-key, anthropic-version, anthropic-beta, content-type", "x-api-key;;odd"]) {
    const preflight = await fetch(`${s.gw.url}/v1/messages`, {
      method: "OPTIONS",
      headers: {
        Origin: "https://app.example",
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": asked,
      },
    });
    assert.equal(preflight.status, 204);
    const allowed = (preflight.headers.get("access-control-allow-headers") ?? "").toLowerCase().split(
      /\s*,\s*/,
    );
    for (const header of ["x-api-key", "anthropic-version", "anthropic-beta", "content-type"]) {
      assert.ok(allowed.includes(header), `${asked}: ${allowed}`);
    }
  }
  const res = await fetch(`${s.gw.url}/v1/messages`, {
    method: "POST",
    headers: {
      Origin: "https://app.example",
      "content-type": "application/json",
      "x-api-key": key,
      "anthropic-version": "2023-06-01",
      "anthropic-dangerous-direct-browser-access": "true",
    },
    body: JSON.stringify({ max_tokens: 20, stream: true, messages: [{ role: "user", content: "hi" }] }),
  });
  assert.equal(res.headers.get("access-control-allow-origin"), "https://app.example");
  assert.equal(sseEvents(await res.text()).at(-1)!.event, "message_stop");
});
