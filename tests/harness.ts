/**
 * A gateway for end-to-end tests: the real app and pipeline on 127.0.0.1, over an in-memory store, with the
 * clock and random source injectable. Admin writes go through the same store functions the CLI uses.
 */
import { type Config, defaultConfig } from "../lib/config.ts";
import { closeDeps, type Deps, meteredServices, routingServices } from "../lib/deps.ts";
import { buildApp } from "../lib/http/app.ts";
import { Catalog } from "../lib/store/catalog.ts";
import { createKey } from "../lib/store/keys.ts";
import { basePolicy, type KeyPolicy, type ServerRecord } from "../lib/store/records.ts";
import { StoreView } from "../lib/store/view.ts";
import { manifest } from "../routes.gen.ts";
import { FakeOllama } from "./fakes/fake_ollama.ts";
import type { UsageRecord } from "../lib/usage/types.ts";
import type { UsageLedger } from "../lib/usage/mod.ts";
import { GatewayMetrics } from "../lib/metrics/mod.ts";

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

const CLOSE_GRACE_MS = 2_000;

export class TestGateway {
  readonly catalog: Catalog;

  #server!: Deno.HttpServer<Deno.NetAddr>;
  /** Ends what is still streaming when closing, as the gateway's own listener does at shutdown. */
  readonly #closing = new AbortController();

  private constructor(
    readonly kv: Deno.Kv,
    readonly deps: Deps,
    /** Every usage record the pipeline reported, in order. */
    readonly usage: UsageRecord[],
    /** Where the records are written, with their counters. */
    readonly ledger: UsageLedger,
  ) {
    this.catalog = new Catalog(kv);
  }

  static async start(options: GatewayOptions = {}): Promise<TestGateway> {
    const kv = await Deno.openKv(":memory:");
    const usage: UsageRecord[] = [];
    const config = defaultConfig({ reloadIntervalMs: 50, ...options.config });
    const view = await StoreView.open(kv, config.reloadIntervalMs, options.now ?? Date.now);
    const metered = meteredServices(kv, config, view, (e) => console.error("test ledger:", e));
    const routing = routingServices(config, view, globalThis.fetch, options.now, options.random);
    if (options.probe) routing.prober.start();
    const deps: Deps = {
      config,
      view,
      now: options.now ?? Date.now,
      random: options.random ?? Math.random,
      policy: metered.policy,
      servers: routing.servers,
      scheduler: routing.scheduler,
      reach: routing.reach,
      prober: routing.prober,
      metrics: new GatewayMetrics(() => routing.servers.status()).watchRouting(routing.scheduler),
      // The real ledger, so quotas and counters work as in production; the list lets tests read records at once.
      usage: {
        record: (r) => {
          usage.push(r);
          metered.usage.record(r);
        },
      },
    };
    const gw = new TestGateway(kv, deps, usage, metered.usage);
    const app = buildApp(deps, manifest);
    gw.#server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      (req, info) =>
        app.fetch(req, {
          remoteAddr: info.remoteAddr,
          signal: AbortSignal.any([req.signal, gw.#closing.signal]),
        }),
    );
    return gw;
  }

  get url(): string {
    return `http://127.0.0.1:${this.#server.addr.port}`;
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

  async close(): Promise<void> {
    // Requests get a moment to finish; an endless one (the admin feed, whose client may have left without the
    // server noticing yet) is then ended instead of holding the shutdown forever.
    const finished = this.#server.shutdown();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = await Promise.race([
      finished.then(() => false),
      new Promise<boolean>((resolve) => timer = setTimeout(() => resolve(true), CLOSE_GRACE_MS)),
    ]);
    clearTimeout(timer);
    if (late) this.#closing.abort();
    await finished;
    await closeDeps(this.deps);
    await this.ledger.close();
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
