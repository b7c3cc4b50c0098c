/**
 * A gateway for end-to-end tests: the gateway's own startup (lib/gateway.ts) over an in-memory store, with the
 * clock and random source injectable, each request through the production drain, and closing as the gateway
 * stops at SIGTERM. It is served on 127.0.0.1 by the gateway's own listener, as `deno task start` serves it
 * (its connection bounds, the per-connection key memo, its refusals' close). Admin writes go through the same
 * store functions the CLI uses.
 */
import { type Config, defaultConfig } from "../lib/config.ts";
import type { Deps } from "../lib/deps.ts";
import { Gateway } from "../lib/gateway.ts";
import { Catalog } from "../lib/store/catalog.ts";
import { createKey } from "../lib/store/keys.ts";
import { basePolicy, type KeyPolicy, type ServerRecord } from "../lib/store/records.ts";
import { FakeOllama } from "./fakes/fake_ollama.ts";
import type { Listening } from "../lib/server/listener.ts";
import type { UsageRecord } from "../lib/usage/types.ts";
import type { UsageLedger } from "../lib/usage/mod.ts";

export interface GatewayOptions {
  config?: Partial<Config>;
  random?: () => number;
  now?: () => number;
  /** Run the health prober in the background, as a real gateway does (default: no probes). */
  probe?: boolean;
}

export type ServerInput = Partial<Omit<ServerRecord, "createdAt" | "updatedAt">> & {
  name: string;
  url: string;
};

/** How long a closing test gateway lets requests finish before it ends them (a stream held open, a feed). */
const CLOSE_GRACE_MS = 2_000;

export class TestGateway {
  readonly catalog: Catalog;
  readonly kv: Deno.Kv;
  readonly deps: Deps;
  /** Where the records are written, with their counters. */
  readonly ledger: UsageLedger;

  private constructor(
    private readonly gateway: Gateway,
    private readonly listening: Listening,
    /** Every usage record the pipeline reported, in order. */
    readonly usage: UsageRecord[],
  ) {
    this.kv = gateway.kv;
    this.deps = gateway.deps;
    this.ledger = gateway.ledger;
    this.catalog = new Catalog(this.kv);
  }

  static async start(options: GatewayOptions = {}): Promise<TestGateway> {
    const kv = await Deno.openKv(":memory:");
    const usage: UsageRecord[] = [];
    const config = defaultConfig({
      host: "127.0.0.1",
      port: 0,
      reloadIntervalMs: 50,
      shutdownGraceMs: CLOSE_GRACE_MS,
      ...options.config,
    });
    const gateway = await Gateway.open(config, {
      kv,
      now: options.now,
      random: options.random,
      probe: options.probe ?? false,
      // The real ledger, so quotas and counters work as in production; the list lets tests read records at once.
      onRecord: (record) => usage.push(record),
    });
    return new TestGateway(gateway, gateway.listen(), usage);
  }

  get url(): string {
    return `http://127.0.0.1:${this.listening.addr.port}`;
  }

  async addServer(input: ServerInput): Promise<void> {
    await this.catalog.servers.add({
      kind: "ollama",
      models: [{ tag: "m1" }],
      weight: 1,
      enabled: true,
      ...input,
    });
    await this.deps.view.refresh();
  }

  /** Creates a key bound to `model` (default "m1") and returns its secret. */
  async key(policy: Partial<KeyPolicy> = {}): Promise<string> {
    const { secret } = await createKey(this.kv, { ...basePolicy("m1"), ...policy });
    await this.deps.view.refresh();
    return secret;
  }

  /** POSTs a JSON body to a gateway path with a bearer key. */
  post(path: string, secret: string | undefined, body: unknown, headers: Record<string, string> = {}) {
    return fetch(`${this.url}${path}`, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        ...(secret ? { Authorization: `Bearer ${secret}` } : {}),
        ...headers,
      },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
  }

  /**
   * Stops as the gateway stops at SIGTERM: its listener stops taking connections, the drain lets requests
   * finish within the grace period, ends the rest and writes the last records. Then the store is closed.
   */
  async close(): Promise<void> {
    await this.gateway.stop();
    this.kv.close();
  }
}

export const USER_HELLO = [{ role: "user" as const, content: "hello there" }];

export interface ScenarioServer extends Partial<Omit<ServerInput, "url">> {
  name: string;
}

/** A gateway with fake backends already registered; dispose it with `await using`. */
export class Scenario {
  private constructor(readonly gw: TestGateway, readonly fakes: Map<string, FakeOllama>) {}

  static async start(
    servers: ScenarioServer[] = [{ name: "a" }],
    options: GatewayOptions = {},
  ): Promise<Scenario> {
    const gw = await TestGateway.start(options);
    const fakes = new Map<string, FakeOllama>();
    for (const s of servers) {
      const fake = FakeOllama.start(s.name);
      // The fake lists what the server is configured with, so model discovery agrees with the admin.
      fake.models = (s.models ?? [{ tag: "m1" }]).map((m) => m.tag);
      fakes.set(s.name, fake);
      await gw.addServer({ url: fake.url, ...s });
    }
    return new Scenario(gw, fakes);
  }

  fake(name = "a"): FakeOllama {
    const fake = this.fakes.get(name);
    if (!fake) throw new Error(`no fake named ${name}`);
    return fake;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.gw.close();
    for (const fake of this.fakes.values()) await fake.close();
  }
}
