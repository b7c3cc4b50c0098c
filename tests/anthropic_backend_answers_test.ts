/**
 * The backend-answer property of the chat paths (backend_answers_property_test.ts), held on /v1/messages and
 * read by Anthropic's own SDK: whatever an Ollama or OpenAI-compatible server answers (generated valid
 * answers, then damaged), the client gets a message (its stream helper rebuilding it from the events), a 502
 * it raises, or, for a stream that broke, the error event it raises with what came before; each request leaves
 * one record, and the usage the client is shown equals the record's, whether the counts are the server's, an
 * estimate in place of invalid ones, or the estimate billed for a stream that broke.
 */
import assert from "node:assert/strict";
import Anthropic from "@anthropic-ai/sdk";
import { checkEveryAnswer, LastAnswer, withAnswerRig } from "./support/backend_answer_runs.ts";
import { sseEvents } from "./support/anthropic_clients.ts";

/** Fixed, so a failure names a case that reruns the same way. */
const SEED = 20_261_127;
const RUNS_PER_ADAPTER = 1_000;
const BASES = ["", "/api"] as const;

/** The SSE framing the client does not check itself: named events, in order, blocks opened and closed. */
function assertFraming(raw: string, where: string): void {
  assert.ok(raw.endsWith("\n\n"), `${where}: unterminated event`);
  const events = sseEvents(raw);
  for (const { event, data } of events) assert.equal(data.type, event, `${where}: ${event}`);
  const names = events.map((e) => e.event);
  assert.deepEqual(names.slice(0, 2), ["message_start", "ping"], where);
  const last = names.at(-1);
  assert.ok(last === "message_stop" || last === "error", `${where}: ends with ${last}`);
  if (last === "message_stop") assert.equal(names.at(-2), "message_delta", where);
  let open: number | undefined;
  let next = 0;
  for (const { event, data } of events) {
    if (event === "content_block_start") {
      assert.equal(open, undefined, `${where}: a block started inside another`);
      assert.equal(data.index, next++, where);
      open = data.index as number;
    } else if (event === "content_block_delta") {
      assert.equal(data.index, open, `${where}: a delta outside its block`);
    } else if (event === "content_block_stop") {
      assert.equal(data.index, open, where);
      open = undefined;
    }
  }
  if (last === "message_stop") assert.equal(open, undefined, `${where}: a block left open`);
}

Deno.test("property: whatever a backend answers, Anthropic's SDK reads a message or raises an error, billed as shown", async () => {
  await withAnswerRig(async (rig) => {
    const { gw, keys } = rig;
    const last = new LastAnswer();
    const client = (key: string, base: string) =>
      new Anthropic({
        apiKey: key,
        baseURL: `${gw.url}${base}`,
        maxRetries: 0,
        fetch: last.fetch,
      });

    const run = { seed: SEED, runsPerAdapter: RUNS_PER_ADAPTER, minPerOutcome: 10 };
    await checkEveryAnswer(rig, run, async (adapter, c, record) => {
      const base = BASES[c.path % BASES.length];
      const where = `${adapter} ${c.stream ? "stream" : "whole"} on ${base}/v1/messages`;
      const params = {
        model: "any",
        max_tokens: 256,
        messages: [{ role: "user" as const, content: "hello there" }],
        tools: [{ name: "look", input_schema: { type: "object" as const } }],
      };
      let shown: Anthropic.Message | undefined;
      let thrown: unknown;
      const stream = c.stream ? client(keys[adapter], base).messages.stream(params) : undefined;
      try {
        shown = stream
          ? await stream.finalMessage()
          : await client(keys[adapter], base).messages.create(params);
      } catch (error) {
        thrown = error;
      }
      const { status, raw } = last;
      const rec = record(where);
      assert.equal(rec.format, "anthropic", where);
      assert.equal(rec.httpStatus, status, where);
      if (status === 502) {
        assert.ok(thrown instanceof Anthropic.InternalServerError, `${where}: ${thrown}`);
        assert.equal(thrown.status, 502, where);
        assert.equal(thrown.type, "api_error", where);
        assert.equal(thrown.errorCode, "bad_gateway", where);
        assert.equal(rec.status, "error", where);
      } else {
        assert.equal(status, 200, `${where}: ${raw.slice(0, 300)}`);
        if (c.stream) assertFraming(raw, where);
        if (rec.status === "partial") {
          // The stream broke: the client raises the error event, and shows what was billed for it.
          assert.ok(thrown instanceof Anthropic.APIError, `${where}: ${thrown}`);
          assert.equal(thrown.errorCode, "bad_gateway", where);
          shown = stream!.currentMessage;
        } else {
          assert.equal(
            thrown,
            undefined,
            `${where}: the client failed: ${thrown}\n${raw.slice(0, 2000)}`,
          );
          assert.equal(rec.status, "ok", where);
        }
        assert.equal(shown!.type, "message", where);
        assert.deepEqual(
          [shown!.usage.input_tokens, shown!.usage.output_tokens],
          [rec.promptTokens, rec.completionTokens],
          `${where}: billed as shown`,
        );
      }
      return { where, status, rec };
    });
  });
});
