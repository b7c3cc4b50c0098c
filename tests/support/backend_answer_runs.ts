/**
 * The run shared by the backend-answer properties: an Ollama and an OpenAI-compatible fake answering scripted
 * bytes behind one gateway, every generated answer sent through a client of the test's choosing, and the
 * checks that hold whatever the client: one record per request, damage-free answers served with the server's
 * counts, every outcome exercised, and the key counters equal to the records' sums; and a fetch for the
 * clients that keeps the last answer's bytes.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { TestGateway } from "../harness.ts";
import { FakeOllama } from "../fakes/fake_ollama.ts";
import { FakeOpenAI } from "../fakes/fake_openai.ts";
import { type Adapter, type AnswerCase, answerCases, scriptFor, undamaged } from "./backend_answers.ts";
import { readTotals } from "../../lib/usage/mod.ts";
import type { UsageRecord } from "../../lib/usage/types.ts";

export interface AnswerRig {
  gw: TestGateway;
  keys: Record<Adapter, string>;
  fakes: Record<Adapter, FakeOllama | FakeOpenAI>;
}

/** Starts the gateway and both fakes, runs `test`, and stops them all. */
export async function withAnswerRig(test: (rig: AnswerRig) => Promise<void>): Promise<void> {
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
    ollama.mode = openai.mode = "scripted";
    await test({ gw, keys, fakes: { ollama, openai } });
  } finally {
    await gw.close();
    await ollama.close();
    await openai.close();
  }
}

/** What one answer's check reports back: where it was, the status the client got, and its record. */
export interface Answered {
  where: string;
  status: number;
  rec: UsageRecord;
}

/**
 * Sends one answer: the test's request and its own checks; `record` takes the request's one usage record
 * (asserting there is exactly one).
 */
export type SendAnswer = (
  adapter: Adapter,
  c: AnswerCase,
  record: (where: string) => UsageRecord,
) => Promise<Answered>;

export interface AnswerRun {
  seed: number;
  runsPerAdapter: number;
  /** The fewest cases each outcome must have had per adapter. */
  minPerOutcome: number;
}

/** Runs the generated answers of both adapters through `send`, then checks the spread and the counters. */
export async function checkEveryAnswer(rig: AnswerRig, run: AnswerRun, send: SendAnswer): Promise<void> {
  const { gw, fakes } = rig;
  const tally = new Map<string, number>();
  const count = (name: string) => tally.set(name, (tally.get(name) ?? 0) + 1);
  for (const adapter of ["ollama", "openai"] as const) {
    await fc.assert(
      fc.asyncProperty(answerCases(adapter), async (c: AnswerCase) => {
        fakes[adapter].scripted = scriptFor(c);
        const before = gw.usage.length;
        const record = (where: string) => {
          assert.equal(gw.usage.length, before + 1, `${where}: one usage record per request`);
          return gw.usage[before];
        };
        const { where, status, rec } = await send(adapter, c, record);
        if (undamaged(c)) {
          // Damage-free answers prove the checks refuse nothing valid: served whole, with the server's counts.
          assert.equal(rec.status, "ok", `${where}: a valid answer was not served`);
          assert.equal(rec.tokenSource, "backend", where);
          assert.deepEqual([rec.promptTokens, rec.completionTokens], [c.facts.prompt, c.facts.completion]);
        }
        count(adapter);
        count(`${adapter} ${status} ${rec.status} ${rec.tokenSource}`);
      }),
      { seed: run.seed, numRuns: run.runsPerAdapter },
    );
  }

  await gw.ledger.flush();
  // The spread is part of the claim: each adapter's answers were served with the server's counts, with
  // estimates in place of invalid ones, broke off mid-stream, and were refused when unreadable.
  for (const adapter of ["ollama", "openai"] as const) {
    assert.equal(tally.get(adapter), run.runsPerAdapter);
    for (
      const outcome of ["200 ok backend", "200 ok estimate", "502 error backend", "200 partial estimate"]
    ) {
      const n = tally.get(`${adapter} ${outcome}`) ?? 0;
      assert.ok(
        n >= run.minPerOutcome,
        `${adapter} "${outcome}": only ${n} cases\n${JSON.stringify([...tally])}`,
      );
    }
  }
  const byKey = new Map<string, number>();
  for (const r of gw.usage) {
    byKey.set(r.keyId!, (byKey.get(r.keyId!) ?? 0) + r.promptTokens + r.completionTokens);
  }
  assert.equal(byKey.size, Object.keys(rig.keys).length);
  for (const [keyId, sum] of byKey) {
    const totals = await readTotals(gw.kv, "key", keyId, new Date());
    assert.deepEqual(totals, { day: sum, week: sum, month: sum }, `counters of key ${keyId}`);
  }
  assert.deepEqual(gw.usage.filter((u) => u.httpStatus >= 500 && u.httpStatus !== 502), []);
}

/** A client's fetch that keeps the status and the whole text of the last answer, for checks the client skips. */
export class LastAnswer {
  status = 0;
  raw = "";
  readonly fetch = async (url: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const res = await fetch(url, init);
    this.status = res.status;
    this.raw = await res.clone().text();
    return res;
  };
}
