/**
 * The backend-answer property of the chat paths (backend_answers_property_test.ts), held on the Responses API's
 * paths and read by the official `openai` client: whatever an Ollama or OpenAI-compatible server answers
 * (generated valid answers, then damaged), the client gets a Response (its stream helper rebuilding it from the
 * events) or a 502 APIError, never anything it cannot read; each request leaves one record, and the usage the
 * client is shown equals the record's, whether the counts are the server's, an estimate in place of invalid
 * ones, or the estimate billed for a stream that broke.
 */
import assert from "node:assert/strict";
import OpenAI from "openai";
import { checkEveryAnswer, LastAnswer, withAnswerRig } from "./support/backend_answer_runs.ts";

/** Fixed, so a failure names a case that reruns the same way. */
const SEED = 20_261_126;
const RUNS_PER_ADAPTER = 1_000;
const BASES = ["/v1", "/api/v1"] as const;

/** The SSE framing the client does not check itself: named events, their order and sequence numbers. */
function assertFraming(raw: string, where: string): void {
  assert.ok(raw.endsWith("\n\n"), `${where}: unterminated event`);
  const events = raw.slice(0, -2).split("\n\n").map((block) => {
    const [name, data] = block.split("\n");
    assert.match(name, /^event: [a-z_.]+$/, `${where}: ${block}`);
    assert.ok(data.startsWith("data: "), `${where}: ${block}`);
    const payload = JSON.parse(data.slice(6));
    assert.equal(payload.type, name.slice(7), where);
    return payload as { type: string; sequence_number: number };
  });
  assert.deepEqual(events.map((e) => e.sequence_number), events.map((_, i) => i), where);
  assert.deepEqual(
    events.slice(0, 2).map((e) => e.type),
    ["response.created", "response.in_progress"],
    where,
  );
  const last = events.at(-1)!.type;
  assert.ok(
    ["response.completed", "response.incomplete", "response.failed"].includes(last),
    `${where}: ${last}`,
  );
}

Deno.test("property: whatever a backend answers, a Responses client reads a Response or a 502, billed as shown", async () => {
  await withAnswerRig(async (rig) => {
    const { gw, keys } = rig;
    const last = new LastAnswer();
    const clients = (key: string, base: string) =>
      new OpenAI({
        apiKey: key,
        baseURL: `${gw.url}${base}`,
        maxRetries: 0,
        fetch: last.fetch,
      });

    const run = { seed: SEED, runsPerAdapter: RUNS_PER_ADAPTER, minPerOutcome: 10 };
    await checkEveryAnswer(rig, run, async (adapter, c, record) => {
      const base = BASES[c.path % BASES.length];
      const where = `${adapter} ${c.stream ? "stream" : "whole"} on ${base}/responses`;
      const client = clients(keys[adapter], base);
      const body = {
        model: "any",
        input: "hello there",
        tools: [{
          type: "function" as const,
          name: "look",
          parameters: { type: "object" },
          strict: false,
        }],
      };
      let shown: OpenAI.Responses.Response | undefined;
      let thrown: unknown;
      try {
        shown = c.stream
          ? await client.responses.stream(body).finalResponse()
          : await client.responses.create(body);
      } catch (error) {
        thrown = error;
      }
      const { status, raw } = last;
      const rec = record(where);
      assert.equal(rec.format, "responses", where);
      assert.equal(rec.httpStatus, status, where);
      if (status === 502) {
        assert.ok(thrown instanceof OpenAI.APIError, `${where}: ${thrown}`);
        assert.equal(thrown.status, 502, where);
        assert.equal(thrown.code, "bad_gateway", where);
        assert.equal((thrown.error as { type?: string }).type, "api_error", where);
        assert.equal(rec.status, "error", where);
      } else {
        assert.equal(status, 200, `${where}: ${raw.slice(0, 300)}`);
        assert.equal(thrown, undefined, `${where}: the client failed: ${thrown}\n${raw.slice(0, 2000)}`);
        if (c.stream) assertFraming(raw, where);
        assert.equal(shown!.object, "response", where);
        const expected = rec.status === "ok" ? ["completed", "incomplete"] : ["failed"];
        assert.ok(
          expected.includes(shown!.status!),
          `${where}: ${shown!.status} for a ${rec.status} record`,
        );
        if (shown!.status === "failed") assert.equal(shown!.error?.code as string, "bad_gateway", where);
        const usage = shown!.usage!;
        assert.deepEqual(
          [usage.input_tokens, usage.output_tokens, usage.total_tokens],
          [rec.promptTokens, rec.completionTokens, rec.promptTokens + rec.completionTokens],
          `${where}: billed as shown`,
        );
      }
      return { where, status, rec };
    });
  });
});
