/**
 * Values a backend's answer may carry but its wire format does not allow: each is treated as missing, so the
 * answer is served, the tokens are estimated (and marked so), the value is counted per server and field in
 * /metrics, and the ledger, the metrics and the client never see it.
 */
import assert from "node:assert/strict";
import { Scenario, type TestGateway, USER_HELLO } from "./harness.ts";
import { VllmScenario } from "./support/openai_backend.ts";
import { CHAT_PATHS } from "./support/hostile_faces.ts";
import { checkAnswer } from "./support/answer_checks.ts";
import { estimateTokens } from "../lib/chat/token_estimate.ts";

async function invalidCount(gw: TestGateway, server: string, field: string): Promise<number> {
  const metric = await (await gw.deps.metrics!.registry()).getSingleMetric("gateway_backend_invalid_total")!
    .get();
  return metric.values.find((v) => v.labels.server === server && v.labels.field === field)?.value ?? 0;
}

Deno.test("an Ollama answer with a negative token count is served on all six paths, billed by estimate", async () => {
  await using s = await Scenario.start();
  const key = await s.gw.key();
  const content = "Four words of answer";
  // What an Ollama-like server answered when sent num_predict -5.
  s.fake().reply = () => ({ content, promptTokens: 12, completionTokens: -2 });
  for (const stream of [false, true]) {
    for (const { path, face } of CHAT_PATHS) {
      const where = `${path} stream ${stream}`;
      const before = s.gw.usage.length;
      const res = await s.gw.post(path, key, {
        messages: USER_HELLO,
        stream,
        ...(stream && face === "A" ? { stream_options: { include_usage: true } } : {}),
      });
      assert.equal(res.status, 200, where);
      const shown = await checkAnswer(res, face, stream, where);
      const rec = s.gw.usage[before];
      assert.equal(rec.status, "ok", where);
      assert.equal(rec.tokenSource, "estimate", where);
      // The valid count is kept; only the invalid one is estimated, from the answer's text.
      assert.deepEqual([rec.promptTokens, rec.completionTokens], [12, estimateTokens(content.length)], where);
      assert.deepEqual(
        shown.counts,
        [12, estimateTokens(content.length)],
        `${where}: the client sees the bill`,
      );
    }
  }
  assert.equal(await invalidCount(s.gw, "a", "completion_tokens"), 12);
  // 8 answers in format A, each billed 5 completion tokens (20 characters), none refused by the metrics.
  const text = (await s.gw.deps.metrics!.scrape()).body;
  assert.match(text, /gateway_tokens_total\{format="openai",type="completion"\} 40\n/);
});

Deno.test("OpenAI-compatible answers: fractional and huge counts, unknown finish reasons, bad reasoning", async () => {
  await using s = await VllmScenario.start();
  const key = await s.gw.key();
  s.fake.reply = () => ({ content: "fine", promptTokens: 1.5, completionTokens: 2 ** 40, doneReason: "eos" });
  for (const stream of [false, true]) {
    const res = await s.gw.post("/v1/chat/completions", key, {
      messages: USER_HELLO,
      stream,
      stream_options: stream ? { include_usage: true } : undefined,
    });
    const shown = await checkAnswer(res, "A", stream, `stream ${stream}`);
    const rec = s.gw.usage.at(-1)!;
    assert.equal(rec.tokenSource, "estimate");
    assert.deepEqual(shown.counts, [rec.promptTokens, rec.completionTokens]);
    assert.deepEqual(rec.completionTokens, estimateTokens(4));
  }
  assert.equal(await invalidCount(s.gw, "vllm", "prompt_tokens"), 2);
  assert.equal(await invalidCount(s.gw, "vllm", "completion_tokens"), 2);
  assert.equal(await invalidCount(s.gw, "vllm", "finish_reason"), 2);

  // A stream whose server never sends the usage chunk is estimated too, rather than billed as zero.
  s.fake.reply = () => ({ content: "no usage here" });
  s.fake.mode = "scripted";
  s.fake.scripted = {
    contentType: "text/event-stream",
    pieces: [
      'data: {"choices":[{"index":0,"delta":{"content":"no usage here","reasoning_content":7}}]}\n\n',
      'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n',
      "data: [DONE]\n\n",
    ],
  };
  const res = await s.gw.post("/v1/chat.php", key, { messages: USER_HELLO, stream: true });
  const shown = await checkAnswer(res, "B", true, "no usage chunk");
  const rec = s.gw.usage.at(-1)!;
  assert.equal(rec.tokenSource, "estimate");
  assert.deepEqual(shown.counts, [rec.promptTokens, estimateTokens("no usage here".length)]);
  assert.equal(await invalidCount(s.gw, "vllm", "reasoning"), 1);
});

Deno.test("an answer that cannot be understood at all stays a 502", async () => {
  await using s = await Scenario.start();
  const key = await s.gw.key();
  s.fake().mode = "scripted";
  const bodies = [
    { message: { role: "assistant", content: 42 }, done: true },
    { message: "hello", done: true },
    { message: { content: "", tool_calls: [{ function: { arguments: {} } }] }, done: true },
  ];
  for (const body of bodies) {
    s.fake().scripted = { contentType: "application/json", pieces: [JSON.stringify(body)] };
    const res = await s.gw.post("/v1/chat/completions", key, { messages: USER_HELLO });
    assert.equal(res.status, 502, JSON.stringify(body));
    await checkAnswer(res, "A", false, JSON.stringify(body));
    assert.equal(s.gw.usage.at(-1)!.status, "error");
  }
});
