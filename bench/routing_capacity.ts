/**
 * The routing bench's capacity scenarios: identical servers carrying one model, nothing loaded at the start,
 * each running two requests at once and queueing the rest inside in arrival order (as Ollama with
 * OLLAMA_NUM_PARALLEL=2), registered as most admins register them (no `--slots`: Ollama does not report the
 * figure) and, for comparison, with `--slots 2`. Two measures: a fixed workload of closed-loop clients (each
 * sends its requests one after another), for wall time, time to first token and each server's share; and how
 * many requests a fleet completes in a fixed time under more demand than it can serve, for scaling.
 */
// @ts-types="@types/seedrandom"
import seedrandom from "seedrandom";
import { createKey } from "../lib/store/keys.ts";
import { openStore } from "../lib/store/kv.ts";
import { basePolicy } from "../lib/store/records.ts";
import { FakeLlmOllama } from "../tests/fakes/fake_llm.ts";
import { launchGateway, registerServers } from "./routing_fleet.ts";
import { chat, type Sample } from "./routing_workload.ts";
import type { Child } from "./support/spawn.ts";

export const IDENTICAL = {
  model: "ma",
  slots: 2,
  loadMs: 400,
  promptMsPerToken: 0.25,
  tokenMs: 4,
};

export const CLOSED_LOOP = {
  /** Clients per server: demand well above what the fleet runs at once (8 against 2 slots each). */
  clientsPerServer: 8,
  requestsPerClient: 5,
  questionWords: [20, 120] as const,
  answerTokens: [16, 512] as const,
  thinkMs: [0, 300] as const,
};

/** Scaling: four clients per slot of the largest fleet, for a fixed time. */
export const SCALING = { clients: 32, seconds: 12 };

export type Policy = "weighted" | "scheduled";

export interface IdenticalFleet {
  fakes: FakeLlmOllama[];
  gateway: Child;
  key: string;
  /** A second key on the same model, another tenant. */
  other: string;
  close(): Promise<void>;
}

/** `preloaded`: the model is loaded everywhere from the start, as on a fleet that has been serving a while. */
export async function startIdentical(
  servers: number,
  policy: Policy,
  declareSlots: boolean,
  preloaded = false,
): Promise<IdenticalFleet> {
  const fakes = Array.from({ length: servers }, (_, i) =>
    FakeLlmOllama.start(`node${i + 1}`, {
      models: [IDENTICAL.model],
      slots: IDENTICAL.slots,
      modelMemory: 1,
      loadMs: IDENTICAL.loadMs,
      promptMsPerToken: IDENTICAL.promptMsPerToken,
      tokenMs: IDENTICAL.tokenMs,
      cacheEntries: 8,
      preloaded: preloaded ? [IDENTICAL.model] : [],
    }));
  const dir = await Deno.makeTempDir({ prefix: "gateway-capacity-bench-" });
  const kv = await openStore(`${dir}/gateway.kv`);
  let key: string, other: string;
  try {
    await registerServers(kv, fakes, [IDENTICAL.model], declareSlots ? IDENTICAL.slots : undefined);
    key = (await createKey(kv, { ...basePolicy(IDENTICAL.model), name: "capacity" })).secret;
    other = (await createKey(kv, { ...basePolicy(IDENTICAL.model), name: "other" })).secret;
  } finally {
    kv.close();
  }
  return { fakes, key, other, ...await launchGateway(dir, policy, fakes) };
}

const between = (random: () => number, [lo, hi]: readonly [number, number]) =>
  lo + Math.floor(random() * (hi - lo + 1));

/** Answer lengths as chat answers have them: many short, a few very long (log-uniform). */
const logUniform = (random: () => number, [lo, hi]: readonly [number, number]) =>
  Math.round(lo * Math.pow(hi / lo, random()));

interface Job {
  question: string;
  answerTokens: number;
  thinkMs: number;
}

/** Every client's requests, drawn once from the seed, so every run sends the same. */
function closedLoopPlan(clients: number, seed = "capacity-bench"): Job[][] {
  const random = seedrandom(seed);
  return Array.from(
    { length: clients },
    (_, c) =>
      Array.from({ length: CLOSED_LOOP.requestsPerClient }, (_, r) => ({
        question: Array.from(
          { length: between(random, CLOSED_LOOP.questionWords) },
          (_, i) => `c${c}r${r}w${i}`,
        )
          .join(" "),
        answerTokens: logUniform(random, CLOSED_LOOP.answerTokens),
        thinkMs: between(random, CLOSED_LOOP.thinkMs),
      })),
  );
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The closed-loop workload: every client sends its requests one after another. */
export async function runClosedLoop(url: string, key: string, servers: number) {
  const plan = closedLoopPlan(CLOSED_LOOP.clientsPerServer * servers);
  const samples: Sample[] = [];
  const started = performance.now();
  await Promise.all(plan.map(async (jobs) => {
    for (const job of jobs) {
      const r = await chat(url, key, [{ role: "user", content: job.question }], job.answerTokens);
      samples.push(r);
      await sleep(job.thinkMs);
    }
  }));
  return { samples, wallMs: performance.now() - started };
}

/** Requests completed in `SCALING.seconds` by `SCALING.clients` clients sending back to back. */
export async function runScaling(url: string, key: string): Promise<{ completed: number; failed: number }> {
  const random = seedrandom("scaling");
  const deadline = performance.now() + SCALING.seconds * 1000;
  let completed = 0, failed = 0;
  await Promise.all(Array.from({ length: SCALING.clients }, async (_, c) => {
    for (let r = 0; performance.now() < deadline; r++) {
      const tokens = logUniform(random, CLOSED_LOOP.answerTokens);
      const result = await chat(url, key, [{ role: "user", content: `scaling c${c} r${r}` }], tokens);
      // Only what finished inside the window counts: the fleet's work in that time.
      if (performance.now() > deadline) break;
      if (result.ok) completed++;
      else failed++;
    }
  }));
  return { completed, failed };
}

/**
 * Two tenants on two identical servers: a steady key (two interactive clients: a short question, then a few
 * hundred ms to read the answer) and a bursty key (a batch job: bursts of many long requests at once).
 */
export const TENANTS = {
  servers: 2,
  steadyClients: 2,
  steadyRequests: 30,
  steadyThinkMs: [200, 600] as const,
  steadyAnswerTokens: [16, 64] as const,
  bursts: 3,
  burstSize: 20,
  burstEveryMs: 3_000,
  burstAnswerTokens: [64, 256] as const,
};

/** The steady key's time to first token, with or without the bursty key's load beside it. */
export async function runTenants(url: string, steady: string, bursty: string, withBurst: boolean) {
  const random = seedrandom("tenants");
  const steadyTtft: number[] = [];
  let failed = 0;
  const clients = Array.from({ length: TENANTS.steadyClients }, async (_, c) => {
    for (let r = 0; r < TENANTS.steadyRequests; r++) {
      const tokens = between(random, TENANTS.steadyAnswerTokens);
      const result = await chat(url, steady, [{ role: "user", content: `steady c${c} r${r}` }], tokens);
      if (result.ok) steadyTtft.push(result.ttftMs);
      else failed++;
      await sleep(between(random, TENANTS.steadyThinkMs));
    }
  });
  const bursts = !withBurst ? [] : Array.from({ length: TENANTS.bursts }, async (_, b) => {
    // The batch job starts while the steady clients are already at work, as it would on a shared fleet.
    await sleep((b + 1) * TENANTS.burstEveryMs);
    await Promise.all(Array.from({ length: TENANTS.burstSize }, async (_, i) => {
      const tokens = between(random, TENANTS.burstAnswerTokens);
      const result = await chat(url, bursty, [{ role: "user", content: `burst b${b} i${i}` }], tokens);
      if (!result.ok) failed++;
    }));
  });
  await Promise.all([...clients, ...bursts]);
  return { steadyTtft, failed };
}
