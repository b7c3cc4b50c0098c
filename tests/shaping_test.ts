import assert from "node:assert/strict";
import { Scenario, USER_HELLO } from "./harness.ts";

const A = "/v1/chat/completions";
const B = "/api/v1/chat.php";
const PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

const TOOLS = [{
  type: "function",
  function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } },
}];

Deno.test("the key's model replaces the client's, and the backend gets the server's tag", async () => {
  await using s = await Scenario.start([{ name: "a", models: [{ tag: "qwen3:8b-q4", alias: "qwen" }] }]);
  const key = await s.gw.key({ model: "qwen" });
  const res = await s.gw.post(A, key, { model: "gpt-4o", messages: USER_HELLO });
  assert.equal(res.status, 200);
  assert.equal(s.fake().last.model, "qwen3:8b-q4");
  assert.equal(
    (await res.json()).model,
    "qwen3:8b-q4",
    "format A shows the model as the backend reported it",
  );
  const b = await (await s.gw.post(B, key, { model: "llama", messages: USER_HELLO })).json();
  assert.equal(b.model, "qwen", "format B shows the server's alias");
});

Deno.test("stream is sent explicitly, and sampling options only when the client set them", async () => {
  await using s = await Scenario.start();
  const key = await s.gw.key();
  await s.gw.post(A, key, { messages: USER_HELLO });
  assert.equal(s.fake().last.stream, false);
  assert.equal(s.fake().last.options, undefined);
  // Written once, so it shows that these pass unchanged: only stop (a list) and max_tokens (num_predict) change.
  const sampling = {
    temperature: 0.2,
    top_p: 0.9,
    top_k: 40,
    min_p: 0.05,
    repeat_penalty: 1.1,
    presence_penalty: 0.5,
    frequency_penalty: 0.25,
    seed: 7,
  };
  await s.gw.post(A, key, { messages: USER_HELLO, ...sampling, stop: "</end>", max_tokens: 256 });
  assert.deepEqual(s.fake().last.options, { ...sampling, stop: ["</end>"], num_predict: 256 });
  await s.gw.post(A, key, {
    messages: USER_HELLO,
    max_tokens: 100,
    max_completion_tokens: 50,
    stop: ["a", "b"],
  });
  assert.deepEqual(s.fake().last.options, { num_predict: 50, stop: ["a", "b"] });
});

Deno.test("format B takes an options object and format like Ollama's clients send them", async () => {
  await using s = await Scenario.start();
  const key = await s.gw.key({ thinking: true });
  const schema = { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] };
  await s.gw.post(B, key, {
    model: "m",
    messages: USER_HELLO,
    stream: false,
    keep_alive: "10m",
    format: schema,
    think: "low",
    temperature: 1.5,
    options: { temperature: 0.1, stop: "x", num_predict: 12, num_ctx: 4096 },
  });
  const last = s.fake().last;
  // keep_alive and num_ctx are the operator's (tests/shared_model_test.ts).
  assert.deepEqual(last.options, { temperature: 0.1, stop: ["x"], num_predict: 12 });
  assert.deepEqual(last.format, schema);
  assert.equal(last.think, "low");
  await s.gw.post(B, key, { messages: USER_HELLO, format: "json" });
  assert.equal(s.fake().last.format, "json");
});

Deno.test("response_format maps to format; force-JSON always asks for JSON", async () => {
  await using s = await Scenario.start();
  const plain = await s.gw.key();
  await s.gw.post(A, plain, { messages: USER_HELLO, response_format: { type: "json_object" } });
  assert.equal(s.fake().last.format, "json");
  const schema = { type: "object", properties: { n: { type: "integer" } } };
  await s.gw.post(A, plain, {
    messages: USER_HELLO,
    response_format: { type: "json_schema", json_schema: { name: "x", schema, strict: true } },
  });
  assert.deepEqual(s.fake().last.format, schema);
  await s.gw.post(A, plain, { messages: USER_HELLO, response_format: { type: "text" } });
  assert.equal(s.fake().last.format, undefined);

  const forced = await s.gw.key({ forceJson: true });
  await s.gw.post(A, forced, { messages: USER_HELLO, response_format: { type: "text" } });
  assert.equal(s.fake().last.format, "json");
  await s.gw.post(B, forced, { messages: USER_HELLO });
  assert.equal(s.fake().last.format, "json");
  await s.gw.post(A, forced, {
    messages: USER_HELLO,
    response_format: { type: "json_schema", json_schema: { name: "x", schema } },
  });
  assert.deepEqual(s.fake().last.format, schema, "a schema is JSON too, and stricter");
});

Deno.test("reasoning_effort and think are honoured only when the key allows thinking", async () => {
  await using s = await Scenario.start();
  const thinker = await s.gw.key({ thinking: true });
  const expectations: [Record<string, unknown>, unknown][] = [
    [{ reasoning_effort: "minimal" }, false],
    [{ reasoning_effort: "none" }, false],
    [{ reasoning_effort: "low" }, "low"],
    [{ reasoning_effort: "medium" }, "medium"],
    [{ reasoning_effort: "high" }, "high"],
    [{ think: true }, true],
    [{ think: false }, false],
    [{}, undefined],
  ];
  for (const [extra, think] of expectations) {
    await s.gw.post(A, thinker, { messages: USER_HELLO, ...extra });
    assert.equal(s.fake().last.think, think, JSON.stringify(extra));
  }
  const plain = await s.gw.key();
  for (const extra of [{ reasoning_effort: "high" }, { think: true }, {}]) {
    await s.gw.post(B, plain, { messages: USER_HELLO, ...extra });
    assert.equal(s.fake().last.think, false, `thinking stays off for ${JSON.stringify(extra)}`);
  }
});

Deno.test("tools and tool_choice pass only for keys with tools", async () => {
  await using s = await Scenario.start();
  const plain = await s.gw.key();
  const res = await s.gw.post(A, plain, { messages: USER_HELLO, tools: TOOLS, tool_choice: "auto" });
  assert.equal(res.status, 200, "silently stripped, not refused");
  assert.equal(s.fake().last.tools, undefined);
  assert.equal(s.fake().last.tool_choice, undefined);

  const tooled = await s.gw.key({ tools: true });
  await s.gw.post(A, tooled, { messages: USER_HELLO, tools: TOOLS, tool_choice: "auto" });
  assert.deepEqual(s.fake().last.tools, TOOLS);
  await s.gw.post(A, tooled, { messages: USER_HELLO, tools: TOOLS, tool_choice: "none" });
  assert.equal(s.fake().last.tools, undefined, "tool_choice none means the model is offered no tools");
});

Deno.test("a key without tools sends no tool history: calls and results are taken out, its words kept", async () => {
  await using s = await Scenario.start();
  const plain = await s.gw.key();
  const res = await s.gw.post(A, plain, {
    messages: [
      ...USER_HELLO,
      {
        role: "assistant",
        content: "Let me look.",
        tool_calls: [{
          id: "c1",
          type: "function",
          function: { name: "run_shell", arguments: '{"cmd":"id"}' },
        }],
      },
      { role: "tool", tool_call_id: "c1", content: "uid=0(root)" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "c2", type: "function", function: { name: "x", arguments: "{}" } }],
      },
      { role: "tool", tool_call_id: "c2", content: "done" },
      { role: "user", content: "and now?" },
    ],
  });
  assert.equal(res.status, 200);
  await res.body?.cancel();
  assert.deepEqual(s.fake().last.messages, [
    { role: "user", content: "hello there" },
    { role: "assistant", content: "Let me look." },
    { role: "user", content: "and now?" },
  ]);
});

Deno.test("images: data URIs become bare base64, remote URLs are dropped, vision-less keys strip them", async () => {
  await using s = await Scenario.start();
  const seeing = await s.gw.key({ vision: true });
  await s.gw.post(A, seeing, {
    messages: [{
      role: "user",
      content: [
        { type: "text", text: "What is" },
        { type: "image_url", image_url: { url: `data:image/png;base64,${PNG}` } },
        { type: "image_url", image_url: { url: "https://169.254.169.254/latest/meta-data" } },
        { type: "text", text: "in this picture?" },
        { type: "image_url", image_url: "data:;base64," + PNG },
      ],
    }],
  });
  const [msg] = s.fake().last.messages as Record<string, unknown>[];
  assert.equal(msg.content, "What is\nin this picture?");
  assert.deepEqual(msg.images, [PNG, PNG]);

  await s.gw.post(B, seeing, {
    messages: [{ role: "user", content: "look", images: [PNG, `data:image/jpeg;base64,${PNG}`] }],
  });
  assert.deepEqual((s.fake().last.messages as Record<string, unknown>[])[0].images, [PNG, PNG]);

  const blind = await s.gw.key();
  const res = await s.gw.post(B, blind, { messages: [{ role: "user", content: "look", images: [PNG] }] });
  assert.equal(res.status, 200);
  assert.equal((s.fake().last.messages as Record<string, unknown>[])[0].images, undefined);
});

Deno.test("the key's system prompt goes first, ahead of the client's own", async () => {
  await using s = await Scenario.start();
  const key = await s.gw.key({ systemPrompt: "Answer in French." });
  await s.gw.post(A, key, {
    messages: [
      { role: "system", content: "Be terse." },
      { role: "developer", content: "No emoji." },
      ...USER_HELLO,
    ],
  });
  assert.deepEqual(
    (s.fake().last.messages as { role: string; content: string }[]).map((m) => [m.role, m.content]),
    [["system", "Answer in French."], ["system", "Be terse."], ["system", "No emoji."], [
      "user",
      "hello there",
    ]],
  );
});

Deno.test("num_ctx is the key's default and num_predict the client's, clamped to the key's and the server's ceilings", async () => {
  await using s = await Scenario.start([{ name: "a", maxCtx: 8192, maxPredict: 1000 }]);
  const key = await s.gw.key({ maxCtx: 16384, maxPredict: 500, defaultCtx: 2048, defaultPredict: 200 });
  const sent = async (body: Record<string, unknown>) => {
    assert.equal((await s.gw.post(A, key, { messages: USER_HELLO, ...body })).status, 200);
    return s.fake().last.options as Record<string, unknown>;
  };
  assert.deepEqual(await sent({}), { num_ctx: 2048, num_predict: 200 }, "defaults apply");
  assert.deepEqual(await sent({ num_ctx: 32768, max_tokens: 4000 }), { num_ctx: 2048, num_predict: 500 });
  assert.deepEqual(await sent({ num_ctx: 4096, num_predict: 300 }), { num_ctx: 2048, num_predict: 300 });
  assert.deepEqual(
    await sent({ num_predict: -1 }),
    { num_ctx: 2048, num_predict: 500 },
    "unlimited is clamped",
  );

  const wide = await s.gw.key({ defaultCtx: 100000 });
  await s.gw.post(B, wide, { messages: USER_HELLO, options: { num_ctx: 4096 } });
  assert.deepEqual(s.fake().last.options, { num_ctx: 8192, num_predict: 1000 }, "server ceilings alone");
});

Deno.test("tool history: string arguments become objects and tool results get their tool's name", async () => {
  await using s = await Scenario.start();
  const key = await s.gw.key({ tools: true });
  await s.gw.post(A, key, {
    tools: TOOLS,
    messages: [
      ...USER_HELLO,
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } },
          { id: "call_2", type: "function", function: { name: "get_time", arguments: "" } },
        ],
      },
      { role: "tool", tool_call_id: "call_1", content: '{"temp_c":3}' },
      { role: "tool", tool_call_id: "call_2", content: "noon" },
    ],
  });
  const msgs = s.fake().last.messages as Record<string, unknown>[];
  assert.deepEqual(msgs[1], {
    role: "assistant",
    content: "",
    tool_calls: [
      { id: "call_1", function: { index: 0, name: "get_weather", arguments: { city: "Oslo" } } },
      { id: "call_2", function: { index: 1, name: "get_time", arguments: {} } },
    ],
  });
  assert.deepEqual(msgs[2], {
    role: "tool",
    content: '{"temp_c":3}',
    tool_name: "get_weather",
    tool_call_id: "call_1",
  });
  assert.equal(msgs[3].tool_name, "get_time");
});
