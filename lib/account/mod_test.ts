import assert from "node:assert/strict";
import { RequestAccount } from "./mod.ts";
import { GatewayMetrics } from "../metrics/mod.ts";
import type { ChatRequest, ChatResult } from "../chat/types.ts";
import { BadGateway } from "../errors.ts";
import type { UsageRecord } from "../usage/types.ts";

const RESULT: ChatResult = {
  model: "m",
  content: "twelve chars",
  toolCalls: [],
  finishReason: "stop",
  promptTokens: 3,
  completionTokens: 4,
};

async function failures(metrics: GatewayMetrics, stage: string): Promise<number> {
  const metric = await (await metrics.registry()).getSingleMetric("gateway_accounting_failures_total")!.get();
  return metric.values.find((v) => v.labels.stage === stage)?.value ?? 0;
}

Deno.test("a usage sink that fails is logged and counted, never thrown into the response", async () => {
  const metrics = new GatewayMetrics(() => []);
  const broken = { record: () => void JSON.parse("{not json") };
  const account = new RequestAccount(broken, "openai", Date.now(), metrics);
  account.completed(RESULT);
  assert.equal(await failures(metrics, "ledger"), 1);
  const { body: text } = await metrics.scrape();
  assert.match(text, /gateway_requests_total\{format="openai",status="200",outcome="ok"\} 1/);
});

Deno.test("metrics that fail to observe a record do not lose it or fail the request", async () => {
  const records: UsageRecord[] = [];
  const metrics = new GatewayMetrics(() => []);
  const failing = {
    observe: () => {
      throw new RangeError("the registry refused the observation");
    },
    accountingFailure: (stage: "ledger" | "metrics") => metrics.accountingFailure(stage),
  };
  new RequestAccount({ record: (r) => records.push(r) }, "ollama", Date.now(), failing).completed(RESULT);
  assert.equal(records.length, 1);
  assert.equal(await failures(metrics, "metrics"), 1);
});

const REQUEST: ChatRequest = {
  model: "m",
  messages: [{ role: "user", content: "a prompt of 22 chars.." }],
  stream: false,
  includeUsage: false,
  options: {},
};

Deno.test("one record per request, and invalid counts never reach it", () => {
  const records: UsageRecord[] = [];
  const account = new RequestAccount({ record: (r) => records.push(r) }, "openai", Date.now());
  account.noteRequest(REQUEST);
  account.completed({ ...RESULT, completionTokens: -2 });
  account.completed(RESULT);
  assert.equal(records.length, 1);
  assert.equal(records[0].tokenSource, "estimate");
  assert.equal(records[0].completionTokens, 3, "twelve characters, about three tokens");
  assert.equal(records[0].promptTokens, 6, "22 characters of prompt, about six tokens");
});

Deno.test("the reservation is settled once, after the record, with the tokens billed, however the request ends", () => {
  const endings: [string, (a: RequestAccount) => void, number][] = [
    ["whole", (a) => a.completed(RESULT), 7],
    [
      "stream done",
      (a) =>
        a.streamEnded({
          done: { type: "done", finishReason: "stop", promptTokens: 5, completionTokens: 9 },
          clientLeft: false,
          deliveredChars: 40,
        }),
      14,
    ],
    ["client left", (a) => a.streamEnded({ clientLeft: true, deliveredChars: 40 }), 6 + 10],
    ["failed", (a) => a.failed(new BadGateway("the backend broke")), 0],
  ];
  for (const [name, end, billed] of endings) {
    const seen: string[] = [];
    const account = new RequestAccount({ record: () => seen.push("record") }, "ollama", Date.now());
    account.noteRequest(REQUEST);
    account.hold = { settle: (tokens) => seen.push(`settle ${tokens}`) };
    end(account);
    account.failed(new BadGateway("a later stage failed too"));
    assert.deepEqual(seen, ["record", `settle ${billed}`], name);
  }
});

Deno.test("a reservation that fails to settle does not fail the request", () => {
  const records: UsageRecord[] = [];
  const account = new RequestAccount({ record: (r) => records.push(r) }, "openai", Date.now());
  account.hold = {
    settle: () => {
      throw new Error("settling broke");
    },
  };
  account.completed(RESULT);
  assert.equal(records.length, 1);
});
