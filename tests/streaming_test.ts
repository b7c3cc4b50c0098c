import assert from "node:assert/strict";
import { Scenario, USER_HELLO } from "./harness.ts";
import { ollamaClient, openaiClient } from "./support/clients.ts";
import { eventually } from "./support/wait_for.ts";

const A = "/v1/chat/completions";
const B = "/api/v1/chat.php";
const TOOL = { type: "function" as const, function: { name: "get_weather", parameters: { type: "object" } } };

Deno.test("openai SDK: create({stream:true}) yields role first, content deltas, finish, usage", async () => {
  await using s = await Scenario.start();
  const key = await s.gw.key();
  s.fake().reply = () => ({ content: "one two three", promptTokens: 9, completionTokens: 3 });
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
  assert.ok(chunks.length >= 5);
  assert.equal(new Set(chunks.map((c) => c.id)).size, 1);
  assert.equal(new Set(chunks.map((c) => c.created)).size, 1);
  const finish = chunks.at(-2)!;
  assert.deepEqual(finish.choices[0].delta, {});
  assert.equal(finish.choices[0].finish_reason, "stop");
  const usage = chunks.at(-1)!;
  assert.deepEqual(usage.choices, []);
  assert.deepEqual(usage.usage, { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 });
  assert.equal(s.fake().last.stream, true);
  assert.equal(s.gw.usage.at(-1)?.status, "ok");
  assert.equal(s.gw.usage.at(-1)?.completionTokens, 3);
  assert.equal(s.gw.usage.at(-1)?.tokenSource, "backend");
});

Deno.test("openai SDK: stream() and finalChatCompletion() accumulate tool calls and reasoning", async () => {
  await using s = await Scenario.start();
  const key = await s.gw.key({ tools: true, thinking: true });
  s.fake().reply = () => ({
    thinking: "Weather needs a tool.",
    toolCalls: [{ name: "get_weather", arguments: { city: "Oslo" } }, {
      name: "get_weather",
      arguments: { city: "Rome" },
    }],
  });
  const runner = openaiClient(s.gw.url, key).chat.completions.stream({
    model: "x",
    messages: [{ role: "user", content: "Oslo and Rome?" }],
    tools: [TOOL],
  });
  const final = await runner.finalChatCompletion();
  const choice = final.choices[0];
  assert.equal(choice.finish_reason, "tool_calls");
  assert.equal(choice.message.role, "assistant");
  const calls = choice.message.tool_calls!.map((c) =>
    c as { id: string; function: { name: string; arguments: string } }
  );
  assert.equal(calls.length, 2);
  assert.deepEqual(calls.map((c) => JSON.parse(c.function.arguments)), [{ city: "Oslo" }, { city: "Rome" }]);
  assert.ok(calls.every((c) => /^call_\w+$/.test(c.id)));
  assert.notEqual(calls[0].id, calls[1].id);
});

Deno.test("ollama client: streaming chat ends with done and the counts", async () => {
  await using s = await Scenario.start([{ name: "a", models: [{ tag: "m1", alias: "friendly" }] }]);
  const key = await s.gw.key();
  s.fake().reply = () => ({ content: "a b c d", promptTokens: 4, completionTokens: 4 });
  const parts = [];
  for await (
    const part of await ollamaClient(s.gw.url, key, B).chat({
      model: "x",
      messages: USER_HELLO,
      stream: true,
    })
  ) {
    parts.push(part);
  }
  assert.equal(parts.map((p) => p.message.content).join(""), "a b c d");
  assert.ok(parts.every((p) => p.model === "friendly"));
  const last = parts.at(-1)!;
  assert.equal(last.done, true);
  assert.equal(last.message.content, "");
  assert.equal(last.prompt_eval_count, 4);
  assert.equal(last.eval_count, 4);
  assert.ok(last.total_duration > 0);
});

Deno.test("raw framing: SSE events and NDJSON lines, byte for byte", async () => {
  await using s = await Scenario.start();
  const key = await s.gw.key();
  s.fake().reply = () => ({ content: "hi there" });
  const a = await s.gw.post(A, key, { messages: USER_HELLO, stream: true });
  assert.equal(a.headers.get("content-type"), "text/event-stream");
  const sse = await a.text();
  assert.ok(sse.endsWith("\n\ndata: [DONE]\n\n"));
  const events = sse.split("\n\n").filter(Boolean);
  for (const event of events) {
    assert.match(event, /^data: [^\n]+$/, "one data line per event, no event: lines");
  }
  for (const event of events.slice(0, -1)) {
    assert.equal(JSON.parse(event.slice(6)).object, "chat.completion.chunk");
  }
  assert.equal(events.filter((e) => e.includes('"usage"')).length, 0, "no usage chunk unless asked");

  const b = await s.gw.post(B, key, { messages: USER_HELLO, stream: true });
  assert.equal(b.headers.get("content-type"), "application/x-ndjson");
  const text = await b.text();
  assert.ok(text.endsWith("}\n"));
  const lines = text.trimEnd().split("\n").map((l) => JSON.parse(l));
  assert.ok(lines.every((l) => !("error" in l)));
  assert.ok(lines.slice(0, -1).every((l) => l.done === false && l.message.role === "assistant"));
  assert.equal(lines.at(-1).done, true);
  assert.equal(lines.at(-1).message.content, "");
  assert.equal(lines.at(-1).done_reason, "stop");
});

/** A stream that breaks after its first chunk is tests/mid_stream_faults_test.ts. */
const FAULTS = ["crash", "garbage", "error-line"] as const;

Deno.test("a stream that fails before its first chunk fails over to the next server", async () => {
  await using s = await Scenario.start([{ name: "a", weight: 100 }, { name: "b" }], { random: () => 0.5 });
  const key = await s.gw.key();
  for (const kind of FAULTS) {
    s.fake("a").streamFault = { after: 0, kind };
    const text = await (await s.gw.post(A, key, { messages: USER_HELLO, stream: true })).text();
    assert.ok(text.includes("Hello ") && text.endsWith("data: [DONE]\n\n"), kind);
  }
  assert.equal(s.fake("b").chats.length, 3);
  assert.ok(s.gw.usage.every((r) => r.status === "ok" && r.server === "b"));
});

Deno.test("a client that leaves after the first chunk stops the backend at once", async () => {
  await using s = await Scenario.start();
  const key = await s.gw.key();
  const words = 200;
  s.fake().reply = () => ({ content: Array.from({ length: words }, (_, i) => `w${i}`).join(" ") });
  s.fake().chunkDelayMs = 10;
  const res = await s.gw.post(A, key, { messages: USER_HELLO, stream: true });
  const reader = res.body!.getReader();
  await reader.read();
  await reader.cancel();
  // The backend's stream ends either way: cancelled, or run to its end by a gateway that kept reading.
  await eventually(
    "the backend's stream to end",
    () => s.fake().streamsCancelled + s.fake().streamsCompleted > 0,
  );
  assert.equal(s.fake().streamsCancelled, 1, "the backend saw its connection closed");
  assert.equal(s.fake().streamsCompleted, 0);
  // At once: a small part of the answer had gone out, not what a lingering read would have taken.
  assert.ok(s.fake().chunksSent < words / 4, `${s.fake().chunksSent} of ${words} words were sent`);
  await eventually("the request to be recorded", () => s.gw.usage.length > 0);
  const [record] = s.gw.usage;
  assert.equal(record.status, "partial");
  assert.equal(record.errorCode, "client_closed");
  assert.ok(record.completionTokens >= 1, "what was delivered is billed");
});

Deno.test("a slow client is not buffered for: the backend is read only as fast as the client reads", async () => {
  await using s = await Scenario.start();
  const key = await s.gw.key();
  // 1,000 chunks of 64 KiB: far more than loopback socket buffers hold (about 10 MiB over both hops).
  const word = "x".repeat(64 * 1024);
  s.fake().reply = () => ({ content: Array.from({ length: 1000 }, () => word).join(" ") });
  const res = await s.gw.post(B, key, { messages: USER_HELLO, stream: true });
  const reader = res.body!.getReader();
  try {
    await reader.read();
    await new Promise((r) => setTimeout(r, 300));
    const sentWhileIdle = s.fake().chunksSent;
    assert.ok(sentWhileIdle < 500, `backend sent ${sentWhileIdle} of 1000 chunks while the client read one`);
  } finally {
    await reader.cancel();
  }
});
