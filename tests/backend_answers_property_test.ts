import assert from "node:assert/strict";
import fc from "fast-check";
import { TestGateway } from "./harness.ts";
import { FakeOllama } from "./fakes/fake_ollama.ts";
import { FakeOpenAI } from "./fakes/fake_openai.ts";
import { CHAT_PATHS } from "./support/hostile_faces.ts";
import {
  type Adapter,
  type AnswerCase,
  answerCases,
  scriptFor,
  undamaged,
} from "./support/backend_answers.ts";
import { checkAnswer, type ClientCounts } from "./support/answer_checks.ts";
import { readTotals } from "../lib/usage/mod.ts";
import type { UsageRecord } from "../lib/usage/types.ts";

/** Fixed, so a failure names a case that reruns the same way. */
const SEED = 20_261_124;
const RUNS_PER_ADAPTER = 2_000;

Deno.test("property: whatever a backend answers, the gateway answers 200 or 502, bills once and validly", async () => {
  // The breaker would soon keep a server that answers nonsense out (503); here every answer must be read.
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

    const tally = new Map<string, number>();
    const count = (name: string) => tally.set(name, (tally.get(name) ?? 0) + 1);
    for (const adapter of ["ollama", "openai"] as const) {
      await fc.assert(
        fc.asyncProperty(answerCases(adapter), async (c: AnswerCase) => {
          fakes[adapter].scripted = scriptFor(c);
          const { path, face } = CHAT_PATHS[c.path];
          const before = gw.usage.length;
          const res = await gw.post(path, keys[adapter], {
            model: "any",
            messages: [{ role: "user", content: "hello there" }],
            tools: [{ type: "function", function: { name: "look", parameters: { type: "object" } } }],
            stream: c.stream,
            ...(c.stream && face === "A" ? { stream_options: { include_usage: c.includeUsage } } : {}),
          });
          const where = `${adapter} ${c.stream ? "stream" : "whole"} on ${path}`;
          const seen: ClientCounts = await checkAnswer(res, face, c.stream, where);
          assert.equal(gw.usage.length, before + 1, `${where}: one usage record per request`);
          const rec = gw.usage[before];
          assertValidRecord(rec, res.status, where);
          if (rec.status === "ok" && seen.counts) {
            assert.deepEqual(
              seen.counts,
              [rec.promptTokens, rec.completionTokens],
              `${where}: billed as shown`,
            );
          }
          if (undamaged(c)) {
            // Damage-free answers prove the checks refuse nothing valid: served whole, with the server's counts.
            assert.equal(rec.status, "ok", `${where}: a valid answer was not served`);
            assert.equal(rec.tokenSource, "backend", where);
            assert.deepEqual([rec.promptTokens, rec.completionTokens], [c.facts.prompt, c.facts.completion]);
          }
          count(`${adapter}`);
          count(`${adapter} ${res.status} ${rec.status} ${rec.tokenSource}`);
        }),
        { seed: SEED, numRuns: RUNS_PER_ADAPTER },
      );
    }

    await gw.ledger.flush();
    for (const adapter of ["ollama", "openai"] as const) assert.equal(tally.get(adapter), RUNS_PER_ADAPTER);
    // The spread is part of the claim: each adapter served answers with the backend's counts, with estimates
    // in place of invalid ones, broke streams, and refused answers it could not understand.
    for (const adapter of ["ollama", "openai"] as const) {
      for (
        const outcome of ["200 ok backend", "200 ok estimate", "502 error backend", "200 partial estimate"]
      ) {
        const n = tally.get(`${adapter} ${outcome}`) ?? 0;
        assert.ok(n >= 20, `${adapter} "${outcome}": only ${n} cases\n${JSON.stringify([...tally])}`);
      }
    }
    await assertCountersMatch(gw, keys);
  } finally {
    await gw.close();
    await ollama.close();
    await openai.close();
  }
});

function assertValidRecord(rec: UsageRecord, status: number, where: string): void {
  assert.equal(rec.httpStatus, status, where);
  assert.ok(status === 200 || status === 502, `${where}: answered ${status}`);
  assert.ok(status === 200 ? rec.status !== "error" : rec.status === "error", `${where}: ${rec.status}`);
  for (const n of [rec.promptTokens, rec.completionTokens]) {
    assert.ok(Number.isSafeInteger(n) && n >= 0 && n <= 2 ** 24, `${where}: token count ${n}`);
  }
  assert.ok(rec.tokenSource === "backend" || rec.tokenSource === "estimate", where);
}

/** The ledger's counters and the metrics equal the sums of the records, and nothing was a 500. */
async function assertCountersMatch(gw: TestGateway, keys: Record<Adapter, string>): Promise<void> {
  const byKey = new Map<string, number>();
  let prompt = 0, completion = 0;
  for (const r of gw.usage) {
    byKey.set(r.keyId!, (byKey.get(r.keyId!) ?? 0) + r.promptTokens + r.completionTokens);
    prompt += r.promptTokens;
    completion += r.completionTokens;
  }
  assert.equal(byKey.size, Object.keys(keys).length);
  for (const [keyId, sum] of byKey) {
    const totals = await readTotals(gw.kv, "key", keyId, new Date());
    assert.deepEqual(totals, { day: sum, week: sum, month: sum }, `counters of key ${keyId}`);
  }
  const metrics = await gw.deps.metrics!.registry();
  const values = async (name: string) => (await metrics.getSingleMetric(name)!.get()).values;
  const tokens = await values("gateway_tokens_total");
  const sum = (type: string) => tokens.filter((v) => v.labels.type === type).reduce((n, v) => n + v.value, 0);
  assert.deepEqual([sum("prompt"), sum("completion")], [prompt, completion], "gateway_tokens_total");
  const requests = await values("gateway_requests_total");
  assert.equal(requests.reduce((n, v) => n + v.value, 0), gw.usage.length);
  assert.deepEqual(requests.filter((v) => Number(v.labels.status) >= 500 && v.labels.status !== "502"), []);
  const invalid = await values("gateway_backend_invalid_total");
  for (const server of ["ol", "oa"]) {
    assert.ok(
      invalid.some((v) => v.labels.server === server && v.value > 0),
      `no invalid value from ${server}`,
    );
  }
  assert.deepEqual(await values("gateway_accounting_failures_total"), []);
}
