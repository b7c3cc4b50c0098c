/**
 * The backend-answer property of the chat paths (backend_answers_property_test.ts), held on the Responses API's
 * paths and read by the official `openai` client: whatever an Ollama or OpenAI-compatible server answers
 * (generated valid answers, then damaged), the client gets a Response (its stream helper rebuilding it from the
 * events) or a 502 APIError, never anything it cannot read; each request leaves one record, and the usage the
 * client is shown equals the record's, whether the counts are the server's, an estimate in place of invalid
 * ones, or the estimate billed for a stream that broke.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import OpenAI from "openai";
import { TestGateway } from "./harness.ts";
import { FakeOllama } from "./fakes/fake_ollama.ts";
import { FakeOpenAI } from "./fakes/fake_openai.ts";
import {
  type Adapter,
  type AnswerCase,
  answerCases,
  scriptFor,
  undamaged,
} from "./support/backend_answers.ts";
import { readTotals } from "../lib/usage/mod.ts";

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
  const gw = await TestGateway.start({ config: { breakerFailures: 1_000_000_000 } });
  const ollama = FakeOllama.start("ol");
  const openai = FakeOpenAI.start("oa", { models: ["m2"] });
  try {
    await gw.addServer({ name: "ol", url: ollama.url, kind: "ollama", models: [{ tag: "m1" }] });
    await gw.addServer({ name: "oa", url: openai.url, kind: "openai", models: [{ tag: "m2" }] });
    const keys: Record<Adapter, string> = {
      ollama: await gw.key({ model: "m1", tools: true, thinking: true }),
      openai: await gw.key({ model: "m2", tools: true, thinking: true }),
    };
    const fakes = { ollama, openai };
    ollama.mode = openai.mode = "scripted";
    let raw = "";
    let status = 0;
    const clients = (key: string, base: string) =>
      new OpenAI({
        apiKey: key,
        baseURL: `${gw.url}${base}`,
        maxRetries: 0,
        fetch: async (url, init) => {
          const res = await fetch(url, init);
          status = res.status;
          raw = await res.clone().text();
          return res;
        },
      });

    const tally = new Map<string, number>();
    const count = (name: string) => tally.set(name, (tally.get(name) ?? 0) + 1);
    for (const adapter of ["ollama", "openai"] as const) {
      await fc.assert(
        fc.asyncProperty(answerCases(adapter), async (c: AnswerCase) => {
          fakes[adapter].scripted = scriptFor(c);
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
          const before = gw.usage.length;
          let shown: OpenAI.Responses.Response | undefined;
          let thrown: unknown;
          try {
            shown = c.stream
              ? await client.responses.stream(body).finalResponse()
              : await client.responses.create(body);
          } catch (error) {
            thrown = error;
          }
          assert.equal(gw.usage.length, before + 1, `${where}: one usage record per request`);
          const rec = gw.usage[before];
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
          if (undamaged(c)) {
            assert.equal(rec.status, "ok", `${where}: a valid answer was not served`);
            assert.equal(rec.tokenSource, "backend", where);
            assert.deepEqual([rec.promptTokens, rec.completionTokens], [c.facts.prompt, c.facts.completion]);
          }
          count(adapter);
          count(`${adapter} ${status} ${rec.status} ${rec.tokenSource}`);
        }),
        { seed: SEED, numRuns: RUNS_PER_ADAPTER },
      );
    }

    await gw.ledger.flush();
    // The spread is part of the claim: each adapter's answers were served with the server's counts, with
    // estimates in place of invalid ones, broke off mid-stream, and were refused when unreadable.
    for (const adapter of ["ollama", "openai"] as const) {
      assert.equal(tally.get(adapter), RUNS_PER_ADAPTER);
      for (
        const outcome of ["200 ok backend", "200 ok estimate", "502 error backend", "200 partial estimate"]
      ) {
        const n = tally.get(`${adapter} ${outcome}`) ?? 0;
        assert.ok(n >= 10, `${adapter} "${outcome}": only ${n} cases\n${JSON.stringify([...tally])}`);
      }
    }
    const byKey = new Map<string, number>();
    for (const r of gw.usage) {
      byKey.set(r.keyId!, (byKey.get(r.keyId!) ?? 0) + r.promptTokens + r.completionTokens);
    }
    for (const [keyId, sum] of byKey) {
      const totals = await readTotals(gw.kv, "key", keyId, new Date());
      assert.deepEqual(totals, { day: sum, week: sum, month: sum }, `counters of key ${keyId}`);
    }
    assert.deepEqual(gw.usage.filter((u) => u.httpStatus >= 500 && u.httpStatus !== 502), []);
  } finally {
    await gw.close();
    await ollama.close();
    await openai.close();
  }
});
