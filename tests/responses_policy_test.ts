/**
 * The Responses API's paths under the same key rules as the chat paths: each toggle (tools, vision, thinking,
 * forced JSON), the injected system prompt and the ceilings, as the backend receives the request and as the
 * Response tells the settings it was served with; the rate limit and the quotas refusing in OpenAI's shape
 * before any backend call; failover before the first byte, whole and streamed; an OpenAI-compatible backend
 * serving the path; and a stream the gateway ends at shutdown.
 */
import assert from "node:assert/strict";
import OpenAI from "openai";
import { Scenario } from "./harness.ts";
import { FakeOpenAI } from "./fakes/fake_openai.ts";
import { openaiClient } from "./support/clients.ts";
import { PNG } from "./support/hostile_bodies.ts";

type Json = Record<string, unknown>;

const PATH = "/v1/responses";

/** A request that asks for everything a key can forbid or bound. */
const ASK_ALL = {
  model: "x",
  input: [{
    role: "user",
    content: [
      { type: "input_text", text: "Look at this" },
      { type: "input_image", image_url: `data:image/png;base64,${PNG}` },
    ],
  }],
  tools: [{ type: "function", name: "look", parameters: { type: "object" } }],
  tool_choice: "required",
  reasoning: { effort: "high" },
  max_output_tokens: 5000,
};

async function answer(s: Scenario, secret: string, body: Json = ASK_ALL): Promise<Json> {
  const res = await s.gw.post(PATH, secret, body);
  const json = await res.json();
  assert.equal(res.status, 200, JSON.stringify(json));
  return json;
}

Deno.test("responses: a key without tools, vision or thinking strips them; the Response says so", async () => {
  await using s = await Scenario.start();
  const secret = await s.gw.key();
  const res = await answer(s, secret);
  const sent = s.fake().last;
  assert.equal(sent.tools, undefined);
  assert.equal(sent.think, false);
  assert.deepEqual(sent.messages, [{ role: "user", content: "Look at this" }], "the image was not forwarded");
  assert.deepEqual(res.tools, []);
  assert.equal(res.tool_choice, "auto");
  assert.deepEqual(res.reasoning, { effort: "none", summary: null });
});

Deno.test("responses: a key with tools, vision and thinking passes them on", async () => {
  await using s = await Scenario.start();
  const secret = await s.gw.key({ tools: true, vision: true, thinking: true });
  const res = await answer(s, secret);
  const sent = s.fake().last;
  assert.deepEqual((sent.tools as Json[]).map((t) => (t.function as Json).name), ["look"]);
  assert.equal(sent.think, "high");
  assert.deepEqual((sent.messages as Json[])[0].images, [PNG]);
  assert.deepEqual((res.tools as Json[]).map((t) => t.name), ["look"]);
  assert.equal(res.tool_choice, "required");
  assert.deepEqual(res.reasoning, { effort: "high", summary: null });
});

Deno.test("responses: forced JSON, the key's system prompt and its ceilings apply", async () => {
  await using s = await Scenario.start([{ name: "a", maxCtx: 4096 }]);
  const secret = await s.gw.key({
    forceJson: true,
    systemPrompt: "You are the house assistant.",
    maxPredict: 100,
    defaultCtx: 8192,
  });
  const res = await answer(s, secret, {
    model: "x",
    instructions: "Be brief.",
    input: "hi",
    max_output_tokens: 5000,
  });
  const sent = s.fake().last;
  assert.equal(sent.format, "json");
  assert.deepEqual(sent.messages, [
    { role: "system", content: "You are the house assistant." },
    { role: "system", content: "Be brief." },
    { role: "user", content: "hi" },
  ]);
  assert.deepEqual(sent.options, { num_predict: 100, num_ctx: 4096 }, "the key's and the server's ceilings");
  assert.deepEqual(res.text, { format: { type: "json_object" } });
  // A schema the client asked for stands: forced JSON only fills in for none.
  await answer(s, secret, {
    model: "x",
    input: "hi",
    text: { format: { type: "json_schema", name: "n", schema: { type: "object" } } },
  });
  assert.deepEqual(s.fake().last.format, { type: "object" });
});

Deno.test("responses: the rate limit and a used-up quota refuse in OpenAI's shape, before any backend call", async () => {
  await using s = await Scenario.start();
  s.fake().reply = () => ({ content: "fine", promptTokens: 25, completionTokens: 35 });
  const limited = await s.gw.key({ rpm: 1 });
  const client = openaiClient(s.gw.url, limited);
  await client.responses.create({ model: "x", input: "hi" });
  await assert.rejects(client.responses.create({ model: "x", input: "hi" }), (e: unknown) => {
    assert.ok(e instanceof OpenAI.RateLimitError, String(e));
    assert.equal((e.error as Json).type, "rate_limit_error");
    assert.ok(e.headers?.get("retry-after"));
    return true;
  });

  const metered = await s.gw.key({ dailyTokens: 50 });
  await openaiClient(s.gw.url, metered).responses.create({ model: "x", input: "hi" });
  const chats = s.fake().chats.length;
  await assert.rejects(
    openaiClient(s.gw.url, metered).responses.stream({ model: "x", input: "hi" }).finalResponse(),
    (e: unknown) => {
      assert.ok(e instanceof OpenAI.RateLimitError, String(e));
      assert.equal(e.code, "quota_exceeded");
      assert.match(e.message, /Daily token quota of this API key is used up \(60 of 50 tokens\)/);
      return true;
    },
  );
  assert.equal(s.fake().chats.length, chats, "no backend call for a refused request");
  const refusals = s.gw.usage.filter((u) => u.status === "rejected");
  assert.deepEqual(refusals.map((u) => [u.format, u.httpStatus, u.errorCode]), [
    ["responses", 429, "rate_limited"],
    ["responses", 429, "quota_exceeded"],
  ]);
});

Deno.test("responses: a server failing before the first byte is passed over, whole and streamed", async () => {
  // Draws that always put the first registered server first (tests/failover_test.ts).
  await using s = await Scenario.start([{ name: "bad", weight: 100 }, { name: "good", weight: 1 }], {
    random: () => 0.5,
  });
  const secret = await s.gw.key();
  s.fake("bad").mode = "error";
  const client = openaiClient(s.gw.url, secret);
  for (const stream of [false, true]) {
    const res = stream
      ? await client.responses.stream({ model: "x", input: "hi" }).finalResponse()
      : await client.responses.create({ model: "x", input: "hi" });
    assert.equal(res.output_text, "Hello from good");
  }
  assert.equal(s.fake("bad").chats.length, 2, "the first choice was tried each time");
  assert.deepEqual(s.gw.usage.map((u) => [u.format, u.status, u.server]), [
    ["responses", "ok", "good"],
    ["responses", "ok", "good"],
  ]);
});

Deno.test("responses: an OpenAI-compatible backend serves the path, whole and streamed, with its tool calls", async () => {
  await using s = await Scenario.start([]);
  await using vllm = FakeOpenAI.start("v", { models: ["m1"] });
  await s.gw.addServer({ name: "v", url: vllm.url, kind: "openai" });
  const secret = await s.gw.key({ tools: true, thinking: true });
  vllm.reply = () => ({
    thinking: "A tool.",
    toolCalls: [{ id: "call_v1", name: "look", arguments: { q: 1 } }],
  });
  const client = openaiClient(s.gw.url, secret);
  const tools = [{ type: "function" as const, name: "look", parameters: { type: "object" }, strict: false }];
  for (const stream of [false, true]) {
    const before = s.gw.usage.length;
    const res = stream
      ? await client.responses.stream({ model: "x", input: "look", tools }).finalResponse()
      : await client.responses.create({ model: "x", input: "look", tools });
    assert.deepEqual(res.output.map((i) => i.type), ["reasoning", "function_call"]);
    const call = res.output[1] as OpenAI.Responses.ResponseFunctionToolCall;
    assert.deepEqual([call.call_id, call.name, JSON.parse(call.arguments)], ["call_v1", "look", { q: 1 }]);
    const rec = s.gw.usage[before];
    assert.deepEqual([res.usage!.input_tokens, res.usage!.output_tokens], [
      rec.promptTokens,
      rec.completionTokens,
    ]);
  }
});

Deno.test("responses: a stream the stopping gateway ends closes with response.failed and its record", async () => {
  const s = await Scenario.start();
  const secret = await s.gw.key();
  s.fake().reply = () => ({ content: "a b c d e f g h i j k l m n o p" });
  s.fake().chunkDelayMs = 200;
  const res = await s.gw.post(PATH, secret, { model: "x", input: "hi", stream: true });
  const reader = res.body!.getReader();
  const first = await reader.read();
  assert.match(new TextDecoder().decode(first.value), /response\.created/);
  const closing = s.gw.close();
  let text = "";
  for (let r = await reader.read(); !r.done; r = await reader.read()) {
    text += new TextDecoder().decode(r.value);
  }
  await closing;
  await s.fake().close();
  const failed = text.trim().split("\n\n").at(-1)!;
  assert.match(failed, /^event: response\.failed\ndata: /);
  const event = JSON.parse(failed.split("\n")[1].slice(6));
  assert.equal(event.response.error.code, "shutting_down");
  const rec = s.gw.usage.at(-1)!;
  assert.equal(rec.status, "partial");
  assert.deepEqual(
    [event.response.usage.input_tokens, event.response.usage.output_tokens],
    [rec.promptTokens, rec.completionTokens],
  );
});
