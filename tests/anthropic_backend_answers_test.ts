/**
 * The backend-answer property of the chat paths (backend_answers_property_test.ts), held on /v1/messages and
 * read by Anthropic's own SDK: whatever an Ollama or OpenAI-compatible server answers (generated valid
 * answers, then damaged), the client gets a message (its stream helper rebuilding it from the events), a 502
 * it raises, or, for a stream that broke, the error event it raises with what came before; each request leaves
 * one record, and the usage the client is shown equals the record's, whether the counts are the server's, an
 * estimate in place of invalid ones, or the estimate billed for a stream that broke.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import Anthropic from "@anthropic-ai/sdk";
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
    const client = (key: string, base: string) =>
      new Anthropic({
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
          const where = `${adapter} ${c.stream ? "stream" : "whole"} on ${base}/v1/messages`;
          const params = {
            model: "any",
            max_tokens: 256,
            messages: [{ role: "user" as const, content: "hello there" }],
            tools: [{ name: "look", input_schema: { type: "object" as const } }],
          };
          const before = gw.usage.length;
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
          assert.equal(gw.usage.length, before + 1, `${where}: one usage record per request`);
          const rec = gw.usage[before];
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
