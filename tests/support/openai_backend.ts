/**
 * The setup shared by the tests that put an OpenAI-compatible backend (a fake vLLM) behind the gateway, so
 * that every one of them starts from the same server, key and model, and what differs between them is only
 * what they send and what the backend does.
 */
import assert from "node:assert/strict";
import { type GatewayOptions, TestGateway } from "../harness.ts";
import { FakeOpenAI, type FakeOpenAIOptions } from "../fakes/fake_openai.ts";
import type { UsageRecord } from "../../lib/usage/types.ts";

export const A = "/v1/chat/completions";
export const B = "/v1/chat.php";
export const BACKEND_KEY = "sk-vllm-backend-9c1e";
export const WEATHER = {
  type: "function" as const,
  function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } },
};

/** A gateway with one OpenAI-compatible server ("vllm", carrying m1 as "house-model"). */
export class VllmScenario {
  private constructor(readonly gw: TestGateway, readonly fake: FakeOpenAI) {}

  static async start(
    { fake: options = {}, gateway = {}, weight = 1 }: {
      fake?: FakeOpenAIOptions;
      gateway?: GatewayOptions;
      weight?: number;
    } = {},
  ): Promise<VllmScenario> {
    const fake = FakeOpenAI.start("vllm", { apiKey: BACKEND_KEY, ...options });
    try {
      const gw = await TestGateway.start(gateway);
      const setup = new VllmScenario(gw, fake);
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

/** Checks only the fields a test names: the rest of a usage record (times, ids) differs on every run. */
export function assertUsage(record: UsageRecord, expected: Partial<UsageRecord>, message?: string): void {
  for (const field of Object.keys(expected) as (keyof UsageRecord)[]) {
    assert.equal(record[field], expected[field], message);
  }
}
