/**
 * An OpenAI-compatible backend (a fake vLLM) behind the whole gateway, seen through the official clients of
 * both formats: what clients get must not depend on the backend's kind. Covers what differs on that wire:
 * the bearer key, SSE with a usage chunk, the two names for reasoning, fragmented tool calls, tool-call ids
 * in the history, and failures in the middle of a stream.
 */
import assert from "node:assert/strict";
import OpenAI from "openai";
import { type GatewayOptions, TestGateway, USER_HELLO } from "./harness.ts";
import { FakeOllama } from "./fakes/fake_ollama.ts";
import { FakeOpenAI, type FakeOpenAIOptions, type ReasoningField } from "./fakes/fake_openai.ts";
import { ollamaClient, openaiClient } from "./support/clients.ts";

const A = "/v1/chat/completions";
const B = "/v1/chat.php";
const BACKEND_KEY = "sk-vllm-backend-9c1e";
const WEATHER = {
  type: "function" as const,
  function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } },
};

/** A gateway with one OpenAI-compatible server ("vllm", carrying m1 as "house-model"). */
class Setup {
  private constructor(readonly gw: TestGateway, readonly fake: FakeOpenAI) {}

  static async start(
    { fake: options = {}, gateway = {}, weight = 1 }: {
      fake?: FakeOpenAIOptions;
      gateway?: GatewayOptions;
      weight?: number;
    } = {},
  ): Promise<Setup> {
    const fake = FakeOpenAI.start("vllm", { apiKey: BACKEND_KEY, ...options });
    try {
      const gw = await TestGateway.start(gateway);
      const setup = new Setup(gw, fake);
      await gw.addServer({
        name: "vllm",
        url: fake.url,
        kind: "openai",
        models: [{ tag: "m1", alias: "house-model" }],
        apiKey: BACKEND_KEY,
        weight,
      });
      return setup;
    } catch (error) {
      await fake.close();
      throw error;
    }
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.gw.close();
    await this.fake.close();
  }
}

Deno.test("format A, whole: the answer and the backend's usage; the server's key goes to the backend", async () => {
  await using s = await Setup.start();
  const key = await s.gw.key();
  s.fake.reply = () => ({ content: "Hi from vLLM!", promptTokens: 11, completionTokens: 4 });
  const done = await openaiClient(s.gw.url, key).chat.completions.create({
    model: "whatever-the-client-says",
    messages: [{ role: "user", content: "Say hi" }],
  });
  assert.equal(done.choices[0].message.content, "Hi from vLLM!");
  assert.equal(done.choices[0].finish_reason, "stop");
  assert.deepEqual(done.usage, { prompt_tokens: 11, completion_tokens: 4, total_tokens: 15 });
  const [chat] = s.fake.chats;
  assert.equal(chat.headers.get("authorization"), `Bearer ${BACKEND_KEY}`, "never the client's key");
  assert.equal(chat.body.model, "m1", "the key's model, by the server's tag");
  assert.equal(chat.body.stream, false);
  assert.equal(chat.body.stream_options, undefined, "vLLM refuses stream_options without stream");
  const [record] = s.gw.usage;
  assert.equal(record.status, "ok");
  assert.equal(record.server, "vllm");
  assert.equal(record.tokenSource, "backend");
  assert.equal(record.promptTokens, 11);
  assert.equal(record.completionTokens, 4);
});

Deno.test("format A, streamed with include_usage: the usage chunk carries the backend's counts", async () => {
  await using s = await Setup.start();
  const key = await s.gw.key();
  s.fake.reply = () => ({ content: "one two three", promptTokens: 9, completionTokens: 3 });
  const stream = await openaiClient(s.gw.url, key).chat.completions.create({
    model: "x",
    messages: [{ role: "user", content: "count" }],
    stream: true,
    stream_options: { include_usage: true },
  });
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  assert.equal(chunks[0].choices[0].delta.role, "assistant");
  assert.equal(chunks.map((c) => c.choices[0]?.delta?.content ?? "").join(""), "one two three");
  assert.equal(chunks.at(-2)!.choices[0].finish_reason, "stop");
  assert.deepEqual(chunks.at(-1)!.choices, []);
  assert.deepEqual(chunks.at(-1)!.usage, { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 });
  assert.deepEqual(s.fake.last.stream_options, { include_usage: true });
  assert.equal(s.fake.streamsCompleted, 1);
  const [record] = s.gw.usage;
  assert.equal(record.status, "ok");
  assert.equal(record.tokenSource, "backend");
  assert.equal(record.promptTokens, 9);
  assert.equal(record.completionTokens, 3);
});

Deno.test("format A, streamed without include_usage: no usage chunk for the client, still billed exactly", async () => {
  await using s = await Setup.start();
  const key = await s.gw.key();
  s.fake.reply = () => ({ content: "alpha beta", promptTokens: 17, completionTokens: 2 });
  const text = await (await s.gw.post(A, key, { messages: USER_HELLO, stream: true })).text();
  assert.ok(text.endsWith("data: [DONE]\n\n"));
  assert.ok(!text.includes('"usage"'), "no usage chunk unless the client asked");
  assert.deepEqual(s.fake.last.stream_options, { include_usage: true }, "the gateway asks for itself");
  assert.equal(s.gw.usage[0].tokenSource, "backend");
  assert.equal(s.gw.usage[0].promptTokens, 17);
  assert.equal(s.gw.usage[0].completionTokens, 2);
});

Deno.test("format B through the ollama client, whole and streamed, with the backend's counts", async () => {
  await using s = await Setup.start();
  const key = await s.gw.key();
  s.fake.reply = () => ({ content: "a b c d", promptTokens: 4, completionTokens: 4 });
  const client = ollamaClient(s.gw.url, key, B);
  const whole = await client.chat({ model: "x", messages: USER_HELLO });
  assert.equal(whole.model, "house-model");
  assert.equal(whole.message.content, "a b c d");
  assert.equal(whole.done, true);
  assert.equal(whole.done_reason, "stop");
  assert.equal(whole.prompt_eval_count, 4);
  assert.equal(whole.eval_count, 4);

  const parts = [];
  for await (const part of await client.chat({ model: "x", messages: USER_HELLO, stream: true })) {
    parts.push(part);
  }
  assert.equal(parts.map((p) => p.message.content).join(""), "a b c d");
  assert.ok(parts.length >= 5, "streamed in pieces");
  const last = parts.at(-1)!;
  assert.equal(last.done, true);
  assert.equal(last.prompt_eval_count, 4);
  assert.equal(last.eval_count, 4);
  assert.deepEqual(s.gw.usage.map((r) => [r.status, r.stream, r.tokenSource]), [
    ["ok", false, "backend"],
    ["ok", true, "backend"],
  ]);
});

for (const field of ["reasoning_content", "reasoning"] as ReasoningField[]) {
  Deno.test(`reasoning sent as "${field}" reaches both formats, whole and streamed`, async () => {
    await using s = await Setup.start({ fake: { reasoningField: field } });
    const key = await s.gw.key({ thinking: true });
    s.fake.reply = () => ({ thinking: "Greeting, so greet back.", content: "Hello!" });
    const messages = [{ role: "user" as const, content: "hi" }];

    const whole = await openaiClient(s.gw.url, key).chat.completions.create({ model: "x", messages });
    const message = whole.choices[0].message as unknown as { content: string; reasoning_content?: string };
    assert.equal(message.reasoning_content, "Greeting, so greet back.");
    assert.equal(message.content, "Hello!");

    const stream = await openaiClient(s.gw.url, key).chat.completions.create({
      model: "x",
      messages,
      stream: true,
    });
    let reasoning = "";
    let content = "";
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta as { content?: string; reasoning_content?: string } | undefined;
      reasoning += delta?.reasoning_content ?? "";
      content += delta?.content ?? "";
    }
    assert.equal(reasoning, "Greeting, so greet back.");
    assert.equal(content, "Hello!");

    const b = ollamaClient(s.gw.url, key, B);
    const native = await b.chat({ model: "x", messages, think: true });
    assert.equal(native.message.thinking, "Greeting, so greet back.");
    assert.equal(native.message.content, "Hello!");
    let thinking = "";
    for await (const part of await b.chat({ model: "x", messages, think: true, stream: true })) {
      thinking += part.message.thinking ?? "";
    }
    assert.equal(thinking, "Greeting, so greet back.");
    assert.equal(s.fake.chats.length, 4);
  });
}

Deno.test("tool calls from a vLLM stream: the openai SDK accumulates them, the ollama client gets objects", async () => {
  await using s = await Setup.start();
  const key = await s.gw.key({ tools: true });
  s.fake.reply = () => ({
    toolCalls: [
      { name: "get_weather", arguments: { city: "Oslo", when: { day: "today" } } },
      { id: "call_fixed1", name: "get_weather", arguments: { city: "Rome" } },
    ],
  });
  const final = await openaiClient(s.gw.url, key).chat.completions.stream({
    model: "x",
    messages: [{ role: "user", content: "Oslo and Rome?" }],
    tools: [WEATHER],
  }).finalChatCompletion();
  const choice = final.choices[0];
  assert.equal(choice.finish_reason, "tool_calls");
  const calls = choice.message.tool_calls!.map((c) => c as OpenAI.ChatCompletionMessageFunctionToolCall);
  assert.deepEqual(calls.map((c) => JSON.parse(c.function.arguments)), [
    { city: "Oslo", when: { day: "today" } },
    { city: "Rome" },
  ]);
  assert.match(calls[0].id, /^chatcmpl-tool-\w+$/, "the backend's id is kept");
  assert.equal(calls[1].id, "call_fixed1");
  assert.deepEqual(s.fake.last.tools, [WEATHER]);

  const native = await ollamaClient(s.gw.url, key, B).chat({
    model: "x",
    messages: [{ role: "user", content: "Oslo and Rome?" }],
    tools: [WEATHER],
  });
  assert.deepEqual(native.message.tool_calls?.map((c) => c.function.arguments), [
    { city: "Oslo", when: { day: "today" } },
    { city: "Rome" },
  ]);
});

Deno.test("a tool result in the history is paired with its call by id, whichever format sent it", async () => {
  await using s = await Setup.start();
  const key = await s.gw.key({ tools: true });
  s.fake.reply = () => ({ content: "It is 3 degrees in Oslo and 18 in Rome." });

  // Format A names the calls; those ids must reach the backend unchanged.
  await openaiClient(s.gw.url, key).chat.completions.create({
    model: "x",
    tools: [WEATHER],
    messages: [
      { role: "user", content: "Oslo and Rome?" },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          {
            id: "call_a1",
            type: "function",
            function: { name: "get_weather", arguments: '{"city":"Oslo"}' },
          },
          {
            id: "call_b2",
            type: "function",
            function: { name: "get_weather", arguments: '{"city":"Rome"}' },
          },
        ],
      },
      { role: "tool", tool_call_id: "call_b2", content: '{"temp_c":18}' },
      { role: "tool", tool_call_id: "call_a1", content: '{"temp_c":3}' },
    ],
  });
  const a = s.fake.last.messages as Record<string, unknown>[];
  assert.deepEqual(
    (a[1].tool_calls as { id: string; function: { arguments: string } }[]).map((c) => c.id),
    ["call_a1", "call_b2"],
  );
  const sentArgs = (a[1].tool_calls as { function: { arguments: string } }[]).map((c) =>
    c.function.arguments
  );
  assert.deepEqual(sentArgs.map((args) => JSON.parse(args)), [{ city: "Oslo" }, { city: "Rome" }]);
  assert.deepEqual([a[2].tool_call_id, a[3].tool_call_id], ["call_b2", "call_a1"]);

  // Format B clients may send calls without ids and results by tool name; the backend still needs ids that
  // pair each result with a call, and distinct ones across turns.
  await ollamaClient(s.gw.url, key, B).chat(
    {
      model: "x",
      tools: [WEATHER],
      messages: [
        { role: "user", content: "Oslo?" },
        {
          role: "assistant",
          content: "",
          tool_calls: [{ function: { name: "get_weather", arguments: { city: "Oslo" } } }],
        },
        { role: "tool", tool_name: "get_weather", content: '{"temp_c":3}' },
        { role: "user", content: "And Rome, and the time there?" },
        {
          role: "assistant",
          content: "",
          tool_calls: [
            { function: { name: "get_weather", arguments: { city: "Rome" } } },
            { function: { name: "get_time", arguments: { city: "Rome" } } },
          ],
        },
        { role: "tool", tool_name: "get_time", content: '{"time":"12:00"}' },
        { role: "tool", tool_name: "get_weather", content: '{"temp_c":18}' },
      ],
    },
  );
  const b = s.fake.last.messages as Record<string, unknown>[];
  const ids = (m: Record<string, unknown>) => (m.tool_calls as { id: string }[]).map((c) => c.id);
  const [first, [weather, time]] = [ids(b[1]), ids(b[4])];
  assert.equal(first.length, 1);
  assert.equal(new Set([...first, weather, time]).size, 3, "every call has its own id");
  assert.ok([...first, weather, time].every((id) => typeof id === "string" && id.length > 0));
  assert.equal(b[2].tool_call_id, first[0]);
  assert.equal(b[5].tool_call_id, time);
  assert.equal(b[6].tool_call_id, weather);
});

Deno.test("a mid-stream failure of a vLLM backend ends both formats' streams with an error, billed as partial", async () => {
  for (const kind of ["error-line", "crash", "garbage"] as const) {
    await using s = await Setup.start();
    const key = await s.gw.key();
    s.fake.reply = () => ({ content: "alpha beta gamma delta" });
    s.fake.streamFault = { after: 2, kind };

    const a = await (await s.gw.post(A, key, { messages: USER_HELLO, stream: true })).text();
    assert.ok(!a.includes("[DONE]"), `${kind}: no clean finish`);
    assert.ok(!a.includes('"finish_reason":"stop"'), kind);
    assert.ok(a.includes('"content":"alpha "') && a.includes('"content":"beta "'), `${kind}: delivered`);
    const lastEvent = JSON.parse(a.trimEnd().split("\n\n").at(-1)!.slice(6));
    assert.equal(typeof lastEvent.error.message, "string", kind);
    if (kind === "error-line") assert.match(lastEvent.error.message, /CUDA error: out of memory/);

    const b = await (await s.gw.post(B, key, { messages: USER_HELLO, stream: true })).text();
    const lines = b.trimEnd().split("\n").map((l) => JSON.parse(l));
    assert.ok(lines.every((l) => l.done !== true), `${kind}: no done line`);
    assert.equal(typeof lines.at(-1).error, "string", kind);

    assert.equal(s.gw.usage.length, 2);
    for (const record of s.gw.usage) {
      assert.equal(record.status, "partial", kind);
      assert.equal(record.tokenSource, "estimate", kind);
      assert.equal(record.completionTokens, Math.ceil("alpha beta ".length / 4), kind);
    }
  }
});

Deno.test("the openai SDK raises a vLLM mid-stream error; the ollama client too", async () => {
  await using s = await Setup.start();
  const key = await s.gw.key();
  s.fake.reply = () => ({ content: "alpha beta gamma" });
  s.fake.streamFault = { after: 1, kind: "error-line" };
  const stream = await openaiClient(s.gw.url, key).chat.completions.create({
    model: "x",
    messages: USER_HELLO,
    stream: true,
  });
  await assert.rejects(async () => {
    for await (const _ of stream);
  }, (e: unknown) => e instanceof OpenAI.APIError && /CUDA error/.test(e.message));
  await assert.rejects(async () => {
    for await (
      const _ of await ollamaClient(s.gw.url, key, B).chat({ model: "x", messages: USER_HELLO, stream: true })
    );
  }, /CUDA error/);
});

Deno.test("failover crosses backend kinds: vLLM to Ollama and Ollama to vLLM, whole and streamed", async () => {
  // A draw of 0.5 keeps the heavier server in front, so the failing one is always tried first.
  for (const failing of ["vllm", "ollama"] as const) {
    await using s = await Setup.start({
      gateway: { random: () => 0.5 },
      weight: failing === "vllm" ? 100 : 1,
    });
    await using ollama = {
      fake: FakeOllama.start("ollama"),
      async [Symbol.asyncDispose]() {
        await this.fake.close();
      },
    };
    await s.gw.addServer({
      name: "ollama",
      url: ollama.fake.url,
      kind: "ollama",
      weight: failing === "ollama" ? 100 : 1,
    });
    const key = await s.gw.key();
    const [bad, good] = failing === "vllm" ? [s.fake, ollama.fake] : [ollama.fake, s.fake];
    // Few requests: enough to cover both formats and both ways of answering, too few to trip a breaker.
    const tries = [["busy", A, false], ["not-found", B, true], ["garbage", A, true]] as const;
    for (const [mode, path, stream] of tries) {
      bad.mode = mode;
      const res = await s.gw.post(path, key, { messages: USER_HELLO, stream });
      assert.equal(res.status, 200, `${failing} ${mode}`);
      const text = await res.text();
      assert.match(text, new RegExp(`"content":"(Hello from )?${good.name}"`), `${failing} ${mode}`);
      assert.ok(!text.includes('"error"'), `${failing} ${mode}`);
    }
    assert.equal(bad.chats.length, tries.length, "the failing server was asked first every time");
    assert.equal(good.chats.length, tries.length);
  }
});

Deno.test("an image sent to a text-only vLLM model gives 503 image_not_supported, not retried", async () => {
  await using s = await Setup.start({ gateway: { random: () => 0.5 }, weight: 100 });
  await using other = FakeOpenAI.start("other", { apiKey: BACKEND_KEY });
  await s.gw.addServer({ name: "other", url: other.url, kind: "openai", apiKey: BACKEND_KEY });
  s.fake.mode = "text-only";
  other.mode = "text-only";
  const key = await s.gw.key({ vision: true });
  const img = "iVBORw0KGgo=";
  const b = await s.gw.post(B, key, { messages: [{ role: "user", content: "see", images: [img] }] });
  assert.equal(b.status, 503);
  assert.equal((await b.json()).error.code, "image_not_supported");
  const a = await s.gw.post(A, key, {
    messages: [{
      role: "user",
      content: [{ type: "text", text: "see" }, {
        type: "image_url",
        image_url: { url: `data:image/png;base64,${img}` },
      }],
    }],
    stream: true,
  });
  assert.equal(a.status, 503);
  assert.equal((await a.json()).error.code, "image_not_supported");
  const sent = s.fake.last.messages as { content: { type: string; image_url?: { url: string } }[] }[];
  assert.equal(sent[0].content[1].image_url?.url, `data:image/png;base64,${img}`, "the image reached vLLM");
  assert.equal(s.fake.chats.length, 2);
  assert.equal(other.chats.length, 0, "another server with the same model is not tried");
  assert.equal((await s.gw.post(B, key, { messages: USER_HELLO })).status, 200, "text still works");
});

Deno.test("a server that refuses the gateway's API key is failed over, not blamed on the client", async () => {
  // A draw of 0.5 keeps the heavier server in front.
  await using s = await Setup.start({ gateway: { random: () => 0.5 } });
  await using rotated = FakeOpenAI.start("rotated", { apiKey: "sk-new-key-after-rotation" });
  await s.gw.addServer({
    name: "rotated",
    url: rotated.url,
    kind: "openai",
    weight: 1000,
    apiKey: BACKEND_KEY,
  });
  const key = await s.gw.key();
  for (const path of [A, B]) {
    const res = await s.gw.post(path, key, { messages: USER_HELLO });
    assert.equal(res.status, 200, path);
    const body = await res.json();
    assert.equal(body.choices?.[0].message.content ?? body.message.content, "Hello from vllm", path);
  }
  assert.equal(rotated.chats.length, 2, "the stale-key server was tried first");
  assert.equal(rotated.chats[0].headers.get("authorization"), `Bearer ${BACKEND_KEY}`);

  s.fake.mode = "busy";
  const res = await s.gw.post(A, key, { messages: USER_HELLO });
  assert.equal(res.status, 503, "when no server is left, it is the gateway's failure, not a bad request");
  assert.equal((await res.json()).error.code, "no_healthy_server");
});

Deno.test("generation options, JSON mode, thinking and tool choice reach vLLM under its own names", async () => {
  await using s = await Setup.start();
  const key = await s.gw.key({ tools: true, thinking: true });
  await s.gw.post(A, key, {
    messages: USER_HELLO,
    temperature: 0.2,
    top_p: 0.9,
    max_tokens: 64,
    stop: "END",
    seed: 7,
    presence_penalty: 0.5,
    response_format: { type: "json_object" },
    reasoning_effort: "low",
    tools: [WEATHER],
    tool_choice: { type: "function", function: { name: "get_weather" } },
  });
  const a = s.fake.last;
  assert.equal(a.temperature, 0.2);
  assert.equal(a.top_p, 0.9);
  assert.equal(a.max_tokens, 64);
  assert.deepEqual(a.stop, ["END"]);
  assert.equal(a.seed, 7);
  assert.equal(a.presence_penalty, 0.5);
  assert.deepEqual(a.response_format, { type: "json_object" });
  assert.equal(a.reasoning_effort, "low");
  assert.deepEqual(a.tool_choice, { type: "function", function: { name: "get_weather" } });

  const schema = { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] };
  await s.gw.post(B, key, {
    messages: USER_HELLO,
    format: schema,
    think: false,
    options: { num_predict: 50, top_k: 20, min_p: 0.05, repeat_penalty: 1.1, num_ctx: 4096 },
  });
  const b = s.fake.last;
  assert.equal(b.max_tokens, 50);
  assert.equal(b.top_k, 20);
  assert.equal(b.min_p, 0.05);
  assert.equal(b.repetition_penalty, 1.1, "vLLM's name for it");
  assert.equal(b.num_ctx, undefined, "a context size is the server's own setting there");
  assert.deepEqual(b.response_format, { type: "json_schema", json_schema: { name: "response", schema } });
  assert.deepEqual(b.chat_template_kwargs, { enable_thinking: false });
  assert.equal(b.reasoning_effort, undefined);
});
