/**
 * A gateway in front of fake LLM servers (tests/fakes/fake_llm.ts) for scheduling tests: each fake holds
 * its own models and slots, the gateway is told each server's `--slots`, and a test can hold every request
 * that got a slot in place (a gate) until it lets them all go.
 */
import { type GatewayOptions, TestGateway } from "../harness.ts";
import { FakeLlmOllama, type FakeLlmOptions } from "../fakes/fake_llm.ts";

export interface FleetServer extends Omit<FakeLlmOptions, "models"> {
  name: string;
  models?: string[];
  weight?: number;
}

export class LlmFleet {
  #release = () => {};

  private constructor(readonly gw: TestGateway, readonly fakes: Map<string, FakeLlmOllama>) {}

  static async start(servers: FleetServer[], options: GatewayOptions = {}): Promise<LlmFleet> {
    const gw = await TestGateway.start(options);
    const fakes = new Map<string, FakeLlmOllama>();
    for (const { name, weight = 1, models = ["m1"], ...engine } of servers) {
      // Fast by default: the tests are about where requests go, not how long they take.
      const fake = FakeLlmOllama.start(name, {
        loadMs: 0,
        tokenMs: 0,
        promptMsPerToken: 0,
        ...engine,
        models,
      });
      fakes.set(name, fake);
      await gw.addServer({
        name,
        url: fake.url,
        weight,
        models: models.map((tag) => ({ tag })),
        slots: engine.slots,
      });
    }
    return new LlmFleet(gw, fakes);
  }

  fake(name: string): FakeLlmOllama {
    const fake = this.fakes.get(name);
    if (!fake) throw new Error(`no fake named ${name}`);
    return fake;
  }

  /** Requests that get a slot on any fake wait there until `release()`. */
  hold(): void {
    const { promise, resolve } = Promise.withResolvers<void>();
    for (const fake of this.fakes.values()) fake.engine.gate = promise;
    this.#release = () => {
      for (const fake of this.fakes.values()) fake.engine.gate = undefined;
      resolve();
    };
  }

  release(): void {
    this.#release();
  }

  /** Requests running on a fake's slots now. */
  running(name: string): number {
    return this.fake(name).engine.running;
  }

  queued(model = "m1"): number {
    return this.gw.deps.scheduler.figures().find((f) => f.model === model)?.depth ?? 0;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    this.release();
    await this.gw.close();
    for (const fake of this.fakes.values()) await fake.close();
  }
}
