/**
 * The routing bench's world: four fake Ollama servers (each holding two of three models, two slots, real
 * load times and token rates, compressed) and a gateway in its own process on a fresh store, with one key
 * per model. Every run gets a fresh fleet in the same starting state, so two routing policies see the same.
 */
import { Catalog } from "../lib/store/catalog.ts";
import { createKey } from "../lib/store/keys.ts";
import { openStore } from "../lib/store/kv.ts";
import { basePolicy } from "../lib/store/records.ts";
import { FakeLlmOllama } from "../tests/fakes/fake_llm.ts";
import { type Child, spawnDeno } from "./support/spawn.ts";

export const MODELS = ["alpha:8b", "beta:8b", "gamma:8b"];

/** Compressed time: a load of ~40 s becomes 400 ms, a token of ~40 ms becomes 4 ms (all ×0.01). */
export const FLEET = {
  servers: 4,
  slots: 2,
  modelMemory: 2,
  loadMs: 400,
  promptMsPerToken: 0.25,
  tokenMs: 4,
  cacheEntries: 8,
};

/** Which two models each server starts with: every model on at least two servers. */
const PRELOADED = [["alpha:8b", "beta:8b"], ["beta:8b", "gamma:8b"], ["gamma:8b", "alpha:8b"], [
  "alpha:8b",
  "beta:8b",
]];

export interface Fleet {
  fakes: FakeLlmOllama[];
  gateway: Child;
  /** Key secret per model. */
  keys: Map<string, string>;
  close(): Promise<void>;
}

/** `declareSlots: false` registers the servers as most admins do, without `--slots`. */
export async function startFleet(policy: "scheduled" | "weighted", declareSlots = true): Promise<Fleet> {
  const fakes = PRELOADED.map((preloaded, i) =>
    FakeLlmOllama.start(`gpu${i + 1}`, {
      models: MODELS,
      preloaded,
      slots: FLEET.slots,
      modelMemory: FLEET.modelMemory,
      loadMs: FLEET.loadMs,
      promptMsPerToken: FLEET.promptMsPerToken,
      tokenMs: FLEET.tokenMs,
      cacheEntries: FLEET.cacheEntries,
    })
  );
  const dir = await Deno.makeTempDir({ prefix: "gateway-routing-bench-" });
  const keys = new Map<string, string>();
  const kv = await openStore(`${dir}/gateway.kv`);
  try {
    await registerServers(kv, fakes, MODELS, declareSlots ? FLEET.slots : undefined);
    for (const model of MODELS) {
      keys.set(model, (await createKey(kv, { ...basePolicy(model), name: model })).secret);
    }
  } finally {
    kv.close();
  }
  return { fakes, keys, ...await launchGateway(dir, policy, fakes) };
}

/** Registers each fake as an Ollama server of weight 1 carrying `models`, with `slots` declared or not. */
export async function registerServers(
  kv: Deno.Kv,
  fakes: { name: string; url: string }[],
  models: string[],
  slots: number | undefined,
): Promise<void> {
  const catalog = new Catalog(kv);
  for (const fake of fakes) {
    await catalog.servers.add({
      name: fake.name,
      url: fake.url,
      kind: "ollama",
      models: models.map((tag) => ({ tag })),
      weight: 1,
      enabled: true,
      slots,
    });
  }
}

/** The gateway on the store in `dir`, and how to stop it, its fakes, and remove the store. */
export async function launchGateway(
  dir: string,
  policy: "scheduled" | "weighted",
  fakes: { close(): Promise<void> }[],
): Promise<{ gateway: Child; close(): Promise<void> }> {
  const gateway = await startRoutingGateway(dir, policy);
  return {
    gateway,
    close: async () => {
      await gateway.stop();
      for (const fake of fakes) await fake.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/** The admin token of the benches' gateways, so they can read the figures the scheduler used. */
export const BENCH_ADMIN_TOKEN = crypto.randomUUID();

/** Each server's slots as the scheduler counts them now, e.g. `2 learned`. */
export async function slotFigures(gateway: Child): Promise<string[]> {
  const res = await fetch(`${gateway.url}/admin/status`, {
    headers: { Authorization: `Bearer ${BENCH_ADMIN_TOKEN}` },
  });
  const status = await res.json();
  return (status.health.servers as { slots?: number; slotsSource?: string }[])
    .map((s) => `${s.slots ?? "?"} ${s.slotsSource ?? ""}`.trim());
}

/**
 * The gateway of a routing bench, in its own process, on the store in `dir`: the gateway itself, or for
 * `weighted` the plain draw it routed with before scheduling (bench/support/weighted_gateway.ts).
 */
export function startRoutingGateway(dir: string, policy: "scheduled" | "weighted"): Promise<Child> {
  const entry = policy === "weighted" ? "bench/support/weighted_gateway.ts" : "main.ts";
  return spawnDeno({
    name: `gateway (${policy})`,
    args: ["run", "--allow-net", "--allow-env", "--allow-read", "--allow-write", entry],
    env: {
      GATEWAY_KV: `${dir}/gateway.kv`,
      PORT: "0",
      HOST: "127.0.0.1",
      GATEWAY_PROBE_INTERVAL_MS: "1000",
      // Compressed time: a minute of waiting becomes a few seconds.
      GATEWAY_QUEUE_WAIT_MS: "20000",
      GATEWAY_QUEUE_MAX: "1000",
      GATEWAY_ADMIN_TOKEN: BENCH_ADMIN_TOKEN,
    },
  });
}

/**
 * With BENCH_SLOTS=1, prints each server's slot figure whenever it changes during a run (what learning did);
 * returns the function that stops watching.
 */
export function watchSlots(gateway: Child): () => void {
  if (!Deno.env.get("BENCH_SLOTS")) return () => {};
  const started = performance.now();
  let last = "";
  const timer = setInterval(async () => {
    const now = (await slotFigures(gateway).catch(() => [])).join(", ");
    if (now !== last) console.error(`  ${((performance.now() - started) / 1000).toFixed(1)} s: ${now}`);
    last = now;
  }, 100);
  return () => clearInterval(timer);
}
