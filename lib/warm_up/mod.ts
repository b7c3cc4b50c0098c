/**
 * @module Warming the request path before the gateway takes its first request. V8 runs a function unoptimized
 * until it has been called 150 times (`deno task start`'s threshold), so a gateway just started served its
 * first few hundred requests on slow code. With a bare proxy just started beside it (`deno task bench --only
 * fresh`, two rounds each): the first 200 sequential streams' first byte over the proxy's +222 / +207 µs (A /
 * B) without the warm-up, +106 / +103 µs with it; whole answers at one connection after them +100 / +63 →
 * +60 / +23 µs. It costs the start some 0.8 s (spawned to listening 276 → 1,083 ms); `GATEWAY_WARM_UP=0`
 * turns it off.
 *
 * Before it listens, the gateway serves a few hundred chats to itself through a gateway of its own kind that
 * shares nothing with it: an in-memory store, its own keys and server (shaped like the store's,
 * `record_shapes.ts`), its own ledger, metrics and server state, its own listener and a stand-in model server on
 * the loopback, probed once as the real servers are, all closed before the real one listens. The code is the
 * same (the same classes, so the same object shapes); only the state differs: the real store, usage, counters,
 * metrics, routing and model servers see none of it.
 *
 * What it may cost once warm: V8 keeps what it optimized during the warm-up until a shape it was not shown
 * undoes it. Side by side with a gateway started without it, under short streams at 64 connections, its
 * main-thread CPU per stream came out 0 to 9 µs higher in six runs (medians of 8–12 rounds; the rounds of one
 * run spread ±10 µs), whichever variant of the warm-up (its chats' shapes, their concurrency, a stand-in
 * written on a bare socket instead of `Deno.serve`); a CPU profile of each under the same load: 93.4 against
 * 94.3 µs busy per stream. Kept: the first byte a restarted gateway's clients wait for is the larger figure.
 */
import type { Config } from "../config.ts";
import { Gateway } from "../gateway.ts";
import { Catalog } from "../store/catalog.ts";
import { createKey } from "../store/keys.ts";
import type { BackendKind } from "../store/records.ts";
import {
  HIGH,
  NO_SHAPES,
  type StoreShapes,
  storeShapes,
  warmUpPolicies,
  warmUpServer,
} from "./record_shapes.ts";
import { startStandInServer } from "./stand_in_server.ts";
import { warmUpAsks } from "./asks.ts";
import { errorText, log } from "../log/mod.ts";

export interface WarmUpReport {
  requests: number;
  /** Chats that did not get a 200 (none, unless the request path is broken). */
  failed: number;
  ms: number;
}

export interface WarmUpOptions {
  /** The kinds of servers to talk to, as the store's servers are; Ollama's when it has none. */
  kinds: ReadonlySet<BackendKind>;
  /**
   * Rounds of one chat of each kind, format and mode. A function called by one of them only must pass V8's
   * threshold (150 calls, `deno task start`) before the real clients come: at 100 rounds a just-started
   * gateway's first 50 streams were still +575–611 µs over the bare proxy's, at 200–300 +142–208. A round's
   * four chats go at once; two rounds at once (eight) started 0.2 s sooner but served the first sequential
   * clients worse (first 200 streams, three runs: +146 / +145, +220 / +161, +277 / +179 µs against +137 /
   * +122, +144 / +107, +164 / +123 with four).
   */
  rounds?: number;
  /** Stops after the round that passed this, on a machine much slower than expected. */
  maxMs?: number;
  /** The store's record shapes, for the warm-up's own records (`record_shapes.ts`). */
  shapes?: StoreShapes;
}

const ROUNDS = 300;
const MAX_MS = 5_000;

/**
 * Warms up as the configuration says, for the servers the store holds; never fails the start: a warm-up that
 * cannot run says why in the log and the gateway starts cold.
 */
export async function warmUpBeforeServing(gateway: Gateway): Promise<WarmUpReport | undefined> {
  const { config } = gateway;
  if (!config.warmUp || config.profile === "deploy") return undefined;
  const servers = [...gateway.deps.view.snapshot.servers.values()];
  const kinds = new Set(servers.map((server) => server.kind));
  try {
    const shapes = await storeShapes(gateway.deps.view.kv, servers);
    const report = await warmUp(config, { kinds, shapes });
    if (report.failed) {
      log.warn("gateway.warm_up", `${report.failed} of ${report.requests} warm-up chats failed`, {
        ...report,
      });
    }
    return report;
  } catch (error) {
    log.warn("gateway.warm_up", `warm-up skipped: ${errorText(error)}`);
    return undefined;
  }
}

const warmUpTag = (kind: BackendKind) => `warm-up-${kind}`;

/**
 * The warm-up's user, and per kind a server on the stand-in and keys bound to it (and a cluster of it, for keys
 * bound to one), shaped like the store's records; the keys' secrets by kind.
 */
async function seed(
  kv: Deno.Kv,
  url: string,
  kinds: ReadonlySet<BackendKind>,
  shapes: StoreShapes,
): Promise<Map<BackendKind, string[]>> {
  const catalog = new Catalog(kv);
  const user = "warm-up";
  await catalog.users.add({ name: user, dailyTokens: HIGH, weeklyTokens: HIGH, monthlyTokens: HIGH });
  const secrets = new Map<BackendKind, string[]>();
  for (const kind of kinds) {
    const tag = warmUpTag(kind);
    const like = shapes.servers.find((server) => server.kind === kind);
    await catalog.servers.add(
      warmUpServer(like, { name: tag, url, kind, models: [{ tag }], weight: 1, enabled: true }),
    );
    const policies = warmUpPolicies(shapes.keys, tag, user, tag);
    // A cluster only for keys bound to one, as the store's were.
    if (policies.some((p) => p.cluster !== undefined)) {
      await catalog.clusters.add({ name: tag, servers: [tag] });
    }
    const keys: string[] = [];
    for (const policy of policies) keys.push((await createKey(kv, policy)).secret);
    secrets.set(kind, keys);
  }
  return secrets;
}

export async function warmUp(
  config: Config,
  { kinds, rounds = ROUNDS, maxMs = MAX_MS, shapes = NO_SHAPES }: WarmUpOptions,
): Promise<WarmUpReport> {
  const started = performance.now();
  const kv = await Deno.openKv(":memory:");
  const served = kinds.size ? kinds : new Set<BackendKind>(["ollama"]);
  const model = startStandInServer([...served].map(warmUpTag));
  let gateway: Gateway | undefined;
  let requests = 0;
  let failed = 0;
  try {
    // Written before the gateway opens: its first view of the store has them, so it logs no change.
    const secrets = await seed(kv, model.url, served, shapes);
    // A round's chats may all wait for the stand-in's one learned slot: a queue bound set lower than that
    // would refuse some of them.
    const queueMax = Math.max(config.queueMax, 8 * secrets.size);
    gateway = await Gateway.open(
      {
        ...config,
        host: "127.0.0.1",
        port: 0,
        accessLog: false,
        traces: false,
        metricsPort: undefined,
        queueMax,
      },
      { kv, quietProbes: true },
    );
    // Its chats are routed with what a probe of the stand-in told, as the real gateway's are.
    await gateway.deps.prober?.probeNow();
    const { addr } = gateway.listen({ hostname: "127.0.0.1", port: 0 });
    const base = `http://127.0.0.1:${addr.port}`;
    for (let round = 0; round < rounds && performance.now() - started < maxMs; round++) {
      const sent: Promise<boolean>[] = [];
      for (const keys of secrets.values()) {
        // The keys' shapes take turns, so each is seen as often as V8 needs to optimize for all of them.
        const secret = keys[round % keys.length];
        for (const ask of warmUpAsks(round)) {
          sent.push(
            fetch(`${base}${ask.path}`, {
              method: "POST",
              headers: { "Content-Type": "application/json", Authorization: `Bearer ${secret}` },
              body: ask.body,
            }).then(async (response) => {
              await response.arrayBuffer();
              return response.status === 200;
            }, () => false),
          );
        }
      }
      for (const ok of await Promise.all(sent)) {
        requests++;
        if (!ok) failed++;
      }
    }
  } finally {
    await gateway?.stop();
    kv.close();
    await model.close();
  }
  return { requests, failed, ms: performance.now() - started };
}
