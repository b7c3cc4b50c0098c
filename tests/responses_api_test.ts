/**
 * The Responses API (`/v1/responses` and its /api mirror) through the official `openai` client, unchanged but
 * for its base URL and key: whole and streamed answers (the stream helper's `finalResponse()`), a function-tool
 * round trip, images, the JSON and reasoning settings as the backend receives them, and the client's usage
 * against the ledger's record, a stream cut by its backend included.
 */
import assert from "node:assert/strict";
import OpenAI from "openai";
import { Scenario } from "./harness.ts";
import { openaiClient } from "./support/clients.ts";
import { PNG } from "./support/hostile_bodies.ts";
import { assertBilledAsShown } from "./support/responses_billing.ts";

type Json = Record<string, unknown>;

const BASES = ["/v1", "/api/v1"] as const;

Deno.test("openai SDK: responses.create on both base URLs, billed as shown", async () => {
  await using s = await Scenario.start();
  const key = await s.gw.key();
  s.fake().reply = () => ({ content: "Hi there!", promptTokens: 11, completionTokens: 3 });
  for (const base of BASES) {
    const before = s.gw.usage.length;
    const res = await openaiClient(s.gw.url, key, base).responses.create({
      model: "anything",
      instructions: "Be brief.",
      input: "Say hi",
    });
    assert.match(res.id, /^resp_\w+$/);
    assert.equal(res.object, "response");
    assert.equal(res.status, "completed");
    assert.ok(Math.abs(res.created_at - Date.now() / 1000) < 60);
    assert.equal(res.output_text, "Hi there!");
    assert.equal(res.output.length, 1);
    const [message] = res.output;
    assert.equal(message.type, "message");
    assert.match((message as { id: string }).id, /^msg_\w+$/);
    assert.equal((res as unknown as Json).store, false);
    assert.equal(res.error, null);
    assert.deepEqual(res.usage, {
      input_tokens: 11,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 3,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 14,
    });
    assertBilledAsShown(s, before, res.usage, "ok", false);
    assert.deepEqual(s.fake().last.messages, [
      { role: "system", content: "Be brief." },
      { role: "user", content: "Say hi" },
    ]);
    assert.equal(s.fake().last.stream, false);
  }
});

Deno.test("openai SDK: responses.stream rebuilds the answer with its reasoning; events in sequence", async () => {
  await using s = await Scenario.start();
  const key = await s.gw.key({ thinking: true });
  s.fake().reply = () => ({
    thinking: "Greeting, short.",
    content: "Hello over the wire",
    promptTokens: 7,
    completionTokens: 4,
  });
  for (const base of BASES) {
    const before = s.gw.usage.length;
    const stream = openaiClient(s.gw.url, key, base).responses.stream({
      model: "x",
      input: [{ role: "user", content: "Greet me" }],
      reasoning: { effort: "low" },
    });
    const events: { type: string; sequence_number: number }[] = [];
    const deltas: string[] = [];
    stream.on("event", (e) => events.push(e));
    stream.on("response.output_text.delta", (e) => deltas.push(e.delta));
    const final = await stream.finalResponse();
    assert.equal(final.status, "completed");
    assert.equal(final.output_text, "Hello over the wire");
    assert.deepEqual(deltas, ["Hello ", "over ", "the ", "wire"]);
    const [reasoning, message] = final.output;
    assert.equal(reasoning.type, "reasoning");
    assert.deepEqual((reasoning as { summary: unknown }).summary, [
      { type: "summary_text", text: "Greeting, short." },
    ]);
    assert.equal(message.type, "message");
    assertBilledAsShown(s, before, final.usage, "ok", true);
    assert.deepEqual(events.map((e) => e.sequence_number), events.map((_, i) => i));
    const types = events.map((e) => e.type);
    assert.deepEqual(types.slice(0, 2), ["response.created", "response.in_progress"]);
    assert.equal(types.at(-1), "response.completed");
    for (
      const type of [
        "response.output_item.added",
        "response.reasoning_summary_text.delta",
        "response.content_part.added",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
      ]
    ) assert.ok(types.includes(type), `${type} in ${types}`);
    assert.equal(s.fake().last.think, "low");
    assert.equal(s.fake().last.stream, true);
  }
});

Deno.test("openai SDK: a function-tool round trip, the call's output paired with it by call_id", async () => {
  await using s = await Scenario.start();
  const key = await s.gw.key({ tools: true });
  const client = openaiClient(s.gw.url, key);
  const tools: OpenAI.Responses.Tool[] = [{
    type: "function",
    name: "get_weather",
    description: "Weather in a city",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    strict: false,
  }];
  s.fake().reply = () => ({
    toolCalls: [{ id: "call_w1", name: "get_weather", arguments: { city: "Oslo" } }],
  });
  const input: OpenAI.Responses.ResponseInput = [{ role: "user", content: "Weather in Oslo?" }];
  const first = await client.responses.create({ model: "x", input, tools, tool_choice: "auto" });
  assert.equal(first.status, "completed");
  const calls = first.output.filter((i) => i.type === "function_call");
  assert.equal(calls.length, 1);
  const [call] = calls as OpenAI.Responses.ResponseFunctionToolCall[];
  assert.equal(call.call_id, "call_w1");
  assert.equal(call.name, "get_weather");
  assert.deepEqual(JSON.parse(call.arguments), { city: "Oslo" });
  assert.deepEqual(s.fake().last.tools, [{
    type: "function",
    function: {
      name: "get_weather",
      description: "Weather in a city",
      parameters: tools[0].type === "function" ? tools[0].parameters : undefined,
    },
  }]);

  // The client sends the whole conversation back, the answer's items and the tool's output included.
  s.fake().reply = () => ({ content: "3 °C in Oslo." });
  const second = await client.responses.create({
    model: "x",
    tools,
    input: [...input, ...first.output as OpenAI.Responses.ResponseInputItem[], {
      type: "function_call_output",
      call_id: call.call_id,
      output: '{"c":3}',
    }],
  });
  assert.equal(second.output_text, "3 °C in Oslo.");
  assert.deepEqual(s.fake().last.messages, [
    { role: "user", content: "Weather in Oslo?" },
    {
      role: "assistant",
      content: "",
      tool_calls: [{
        id: "call_w1",
        function: { index: 0, name: "get_weather", arguments: { city: "Oslo" } },
      }],
    },
    { role: "tool", content: '{"c":3}', tool_name: "get_weather", tool_call_id: "call_w1" },
  ]);
});

Deno.test("openai SDK: a streamed function call arrives as argument events and a function_call item", async () => {
  await using s = await Scenario.start();
  const key = await s.gw.key({ tools: true });
  s.fake().reply = () => ({ toolCalls: [{ name: "lookup", arguments: { q: "deno" } }] });
  const stream = openaiClient(s.gw.url, key).responses.stream({
    model: "x",
    input: "search deno",
    tools: [{ type: "function", name: "lookup", parameters: { type: "object" }, strict: false }],
  });
  const argDeltas: string[] = [];
  stream.on("response.function_call_arguments.delta", (e) => argDeltas.push(e.delta));
  const final = await stream.finalResponse();
  const call = final.output.find((i) =>
    i.type === "function_call"
  ) as OpenAI.Responses.ResponseFunctionToolCall;
  assert.match(call.call_id, /^call_\w+$/, "a call the backend sent without an id gets one");
  assert.deepEqual(JSON.parse(call.arguments), { q: "deno" });
  assert.deepEqual(argDeltas, [call.arguments]);
});

Deno.test("responses: an inline image reaches the backend; JSON mode, limits and sampling as asked", async () => {
  await using s = await Scenario.start();
  const key = await s.gw.key({ vision: true });
  s.fake().reply = () => ({ content: '{"ok":true}' });
  const schema = { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] };
  const res = await openaiClient(s.gw.url, key).responses.create({
    model: "x",
    input: [{
      role: "user",
      content: [
        { type: "input_text", text: "What is this?" },
        { type: "input_image", image_url: `data:image/png;base64,${PNG}`, detail: "auto" },
      ],
    }],
    text: { format: { type: "json_schema", name: "answer", schema, strict: true } },
    max_output_tokens: 64,
    temperature: 0.2,
    top_p: 0.9,
  });
  assert.equal(res.output_text, '{"ok":true}');
  const sent = s.fake().last;
  assert.deepEqual(sent.messages, [{ role: "user", content: "What is this?", images: [PNG] }]);
  assert.deepEqual(sent.format, schema);
  assert.deepEqual(sent.options, { temperature: 0.2, top_p: 0.9, num_predict: 64 });
  // The response tells the settings it was served with.
  assert.equal(res.max_output_tokens, 64);
  assert.equal(res.temperature, 0.2);
  assert.equal(res.text?.format?.type, "json_schema");
});

Deno.test("responses: a stream cut by its backend ends in response.failed, showing what is billed", async () => {
  await using s = await Scenario.start();
  const key = await s.gw.key();
  s.fake().reply = () => ({ content: "one two three four five six", promptTokens: 9, completionTokens: 6 });
  s.fake().streamFault = { kind: "crash", after: 2 };
  const before = s.gw.usage.length;
  const stream = openaiClient(s.gw.url, key).responses.stream({ model: "x", input: "Count to six" });
  const final = await stream.finalResponse();
  assert.equal(final.status, "failed");
  assert.equal(final.error?.code as string, "bad_gateway");
  assert.match(final.error!.message, /model server/);
  assert.equal(final.output_text, "one two ");
  assertBilledAsShown(s, before, final.usage, "partial", true);
  assert.equal(s.gw.usage[before].tokenSource, "estimate");
  assert.ok(final.usage!.output_tokens > 0);
});

Deno.test("responses: an answer cut at the token limit is incomplete, whole and streamed", async () => {
  await using s = await Scenario.start();
  const key = await s.gw.key();
  s.fake().reply = () => ({ content: "one two three four five" });
  const client = openaiClient(s.gw.url, key);
  const whole = await client.responses.create({ model: "x", input: "Count", max_output_tokens: 2 });
  assert.equal(whole.status, "incomplete");
  assert.deepEqual(whole.incomplete_details, { reason: "max_output_tokens" });
  assert.equal(whole.output_text, "one two ");
  const streamed = await client.responses.stream({ model: "x", input: "Count", max_output_tokens: 2 })
    .finalResponse();
  assert.equal(streamed.status, "incomplete");
  assert.equal(streamed.output_text, "one two ");
});

Deno.test("responses: stored state is refused with what to send instead; errors in OpenAI's shape", async () => {
  await using s = await Scenario.start();
  const key = await s.gw.key({ vision: true });
  const client = openaiClient(s.gw.url, key);
  const refused = async (body: Json, pattern: RegExp) => {
    await assert.rejects(
      client.responses.create(body as unknown as OpenAI.Responses.ResponseCreateParamsNonStreaming),
      (e: unknown) => {
        assert.ok(e instanceof OpenAI.BadRequestError, String(e));
        assert.equal(e.status, 400);
        assert.equal((e.error as Json).type, "invalid_request_error");
        assert.equal(e.code, "invalid_request");
        assert.match(e.message, pattern);
        return true;
      },
    );
  };
  await refused({ model: "x", input: "hi", previous_response_id: "resp_123" }, /send the whole conversation/);
  await refused({ model: "x", input: "hi", conversation: "conv_1" }, /"conversation" is not supported/);
  await refused({ model: "x", input: [{ type: "item_reference", id: "msg_1" }] }, /stores\s+no responses/);
  await refused({ model: "x", input: [{ id: "msg_1" }] }, /refers to a stored item/);
  await refused({ model: "x" }, /"input" is required/);
  await refused({ model: "x", input: [] }, /"input" must be a non-empty array/);
  await refused({
    model: "x",
    input: [{ role: "user", content: [{ type: "input_image", image_url: "https://example.com/cat.png" }] }],
  }, /must be a data: URI.*fetches no remote images/);
  await refused({
    model: "x",
    input: [{ role: "user", content: [{ type: "input_image", file_id: "file-1" }] }],
  }, /stores no files/);
  await refused(
    { model: "x", input: "hi", tools: [{ type: "web_search" }] },
    /"tools\[0\]\.type" must be one of "function"/,
  );
  await refused({ model: "x", input: "hi", background: true }, /"background" is not supported/);
  assert.equal(s.fake().chats.length, 0, "no refused request reached the backend");
  assert.ok(
    s.gw.usage.every((u) => u.format === "responses" && u.status === "rejected" && u.httpStatus === 400),
  );

  // store is answered as false rather than refused.
  const stored = await client.responses.create({ model: "x", input: "hi", store: true });
  assert.equal((stored as unknown as Json).store, false);

  await assert.rejects(
    openaiClient(s.gw.url, "gwk_wrong").responses.create({ model: "x", input: "hi" }),
    (e: unknown) => e instanceof OpenAI.AuthenticationError && e.status === 401 && /API key/.test(e.message),
  );
});
