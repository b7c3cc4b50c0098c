/**
 * Anthropic's official SDK (`@anthropic-ai/sdk`), unchanged, with only the gateway's base URL and a key:
 * refusals it raises as its own error classes (a bad key, a body Anthropic would refuse), the model list, and
 * count_tokens.
 */
import assert from "node:assert/strict";
import Anthropic from "@anthropic-ai/sdk";
import { Scenario } from "./harness.ts";
import { anthropicClient } from "./support/anthropic_clients.ts";
import { WEATHER_TOOL } from "./support/anthropic_weather_tool.ts";

type Json = Record<string, unknown>;

const HELLO = [{ role: "user" as const, content: "Say hi" }];

Deno.test("anthropic SDK: a bad key is an AuthenticationError; a key in x-api-key is accepted as Anthropic sends it", async () => {
  await using s = await Scenario.start();
  await assert.rejects(
    anthropicClient(s.gw.url, "gwk_wrong").messages.create({ model: "x", max_tokens: 10, messages: HELLO }),
    (e: unknown) =>
      e instanceof Anthropic.AuthenticationError && e.status === 401 && e.type === "authentication_error" &&
      e.apiMessage === "Invalid API key" && e.errorCode === "invalid_api_key",
  );
  const key = await s.gw.key();
  // As Claude Code sends it: the key in x-api-key, beta headers, and a query on the path.
  const res = await fetch(`${s.gw.url}/v1/messages?beta=true`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-api-key": key,
      "anthropic-version": "2023-06-01",
      "anthropic-beta": "interleaved-thinking-2025-05-14",
    },
    body: JSON.stringify({ model: "x", max_tokens: 10, messages: HELLO }),
  });
  assert.equal(res.status, 200);
  assert.equal((await res.json()).type, "message");

  const anonymous = await s.gw.post("/v1/messages", undefined, { max_tokens: 10, messages: HELLO });
  assert.equal(anonymous.status, 401);
  assert.deepEqual(await anonymous.json(), {
    type: "error",
    error: {
      type: "authentication_error",
      message: "Missing or invalid API key: send it as 'x-api-key: <key>' or 'Authorization: Bearer <key>'",
      details: { error_code: "invalid_api_key" },
    },
  });
  assert.deepEqual(s.gw.usage.map((r) => [r.format, r.httpStatus, r.errorCode]), [
    ["anthropic", 401, "invalid_api_key"],
    ["anthropic", 200, undefined],
    ["anthropic", 401, "invalid_api_key"],
  ]);
});

Deno.test("anthropic SDK: a body Anthropic would refuse is a BadRequestError that names the field", async () => {
  await using s = await Scenario.start();
  const client = anthropicClient(s.gw.url, await s.gw.key());
  const refused = async (params: Json, message: RegExp) => {
    await assert.rejects(
      client.messages.create(params as unknown as Anthropic.MessageCreateParamsNonStreaming),
      (e: unknown) => e instanceof Anthropic.BadRequestError && message.test(e.apiMessage ?? ""),
      JSON.stringify(params),
    );
  };
  await refused({ model: "x", messages: HELLO }, /^Cannot parse request: "max_tokens" is required$/);
  await refused({ model: "x", max_tokens: 0, messages: HELLO }, /"max_tokens" is too small/);
  await refused({ model: "x", max_tokens: 5, messages: [] }, /"messages" must be a non-empty array/);
  await refused(
    { model: "x", max_tokens: 5, messages: [{ role: "user", content: [{ type: "video", url: "x" }] }] },
    /"messages\[0\]\.content\[0\]\.type" must be one of "text", "image", "tool_use", "tool_result"/,
  );
  await refused(
    {
      model: "x",
      max_tokens: 5,
      messages: [{ role: "user", content: [{ type: "document", source: { type: "text", data: "x" } }] }],
    },
    /"messages\[0\]\.content\[0\]" is a document block, which this gateway cannot serve/,
  );
  await refused(
    {
      model: "x",
      max_tokens: 5,
      messages: HELLO,
      tools: [{ type: "web_search_20250305", name: "web_search" }],
    },
    /"tools\[0\]" is Anthropic's server tool web_search_20250305, which this gateway cannot serve/,
  );
  await refused(
    { model: "x", max_tokens: 5, messages: HELLO, thinking: { type: "sometimes" } },
    /"thinking\.type" must be one of "enabled", "disabled", "adaptive", "between_tools"/,
  );
  assert.equal(s.fake().chats.length, 0);
});

Deno.test("anthropic SDK: models.list and models.retrieve show the key's one model in Anthropic's shape", async () => {
  await using s = await Scenario.start([{ name: "a", models: [{ tag: "llama3.2:3b" }] }]);
  const key = await s.gw.key({ model: "llama3.2:3b" });
  const client = anthropicClient(s.gw.url, key);
  const page = await client.models.list();
  assert.equal(page.data.length, 1);
  const [model] = page.data;
  assert.equal(model.type, "model");
  assert.equal(model.id, "llama3.2:3b");
  assert.equal(model.display_name, "llama3.2:3b");
  assert.ok(!Number.isNaN(Date.parse(model.created_at)), model.created_at);
  assert.equal(page.has_more, false);
  assert.deepEqual([page.first_id, page.last_id], ["llama3.2:3b", "llama3.2:3b"]);
  assert.deepEqual(await client.models.retrieve("llama3.2:3b"), model);
  await assert.rejects(
    client.models.retrieve("claude-opus"),
    (e: unknown) => e instanceof Anthropic.NotFoundError && e.type === "not_found_error",
  );

  // The same path for an OpenAI client, and for the key sent as x-api-key alone.
  const openai = await (await fetch(`${s.gw.url}/v1/models`, { headers: { Authorization: `Bearer ${key}` } }))
    .json();
  assert.equal(openai.object, "list");
  assert.deepEqual(openai.data.map((m: Json) => [m.id, m.object]), [["llama3.2:3b", "model"]]);
  const byHeader = await (await fetch(`${s.gw.url}/api/v1/models`, { headers: { "x-api-key": key } })).json();
  assert.deepEqual(byHeader.data.map((m: Json) => [m.id, m.type]), [["llama3.2:3b", "model"]]);
  const refused = await fetch(`${s.gw.url}/v1/models`, { headers: { "x-api-key": "gwk_wrong" } });
  assert.equal(refused.status, 401);
  assert.equal((await refused.json()).error.type, "authentication_error");
  assert.equal(s.gw.usage.length, 0, "discovery leaves no usage record");
});

Deno.test("count_tokens answers the gateway's estimate, marked as such, of everything the model would read", async () => {
  await using s = await Scenario.start();
  const key = await s.gw.key({ tools: true, systemPrompt: "Answer in French." });
  const client = anthropicClient(s.gw.url, key);
  const bare = await client.messages.countTokens({ model: "claude-any", messages: HELLO });
  // "Answer in French." (17) and "Say hi" (6): 23 characters, four to a token.
  assert.deepEqual(bare, { input_tokens: 6, estimated: true });
  const withTool = await client.messages.countTokens({
    model: "claude-any",
    messages: HELLO,
    tools: [WEATHER_TOOL],
  });
  assert.ok(withTool.input_tokens > bare.input_tokens + 20, `tools count: ${withTool.input_tokens}`);
  const noTools = await anthropicClient(s.gw.url, await s.gw.key()).messages.countTokens({
    model: "claude-any",
    messages: HELLO,
    tools: [WEATHER_TOOL],
  });
  assert.deepEqual(noTools, { input_tokens: 2, estimated: true }, "tools the key may not use are not sent");
  await assert.rejects(
    client.messages.countTokens({ model: "claude-any", messages: [] }),
    (e: unknown) => e instanceof Anthropic.BadRequestError,
  );
  assert.equal(s.fake().chats.length, 0, "no backend was asked");
  assert.equal(s.gw.usage.length, 0);
});
