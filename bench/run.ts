/**
 * `deno task bench`: the gateway measured against the runtime's own ceiling. Three processes on 127.0.0.1 (a
 * fast fake Ollama, a bare pass-through Deno proxy in front of it, and the gateway in front of it with a real
 * key and the usage ledger on) get the same load from wrk, in its own process; the gateway is loaded twice,
 * in format A and in format B. Every figure is a median over rounds, and the order of the four targets rotates
 * from round to round, so a busy moment of the machine does not fall on one of them only. Prints a markdown
 * table and writes bench/results/latest.json.
 *
 * BENCH_ROUNDS (default 5) and BENCH_SECONDS (seconds of load per target and round, default 3, in up to three
 * slices the targets take turns at) trade time for steadiness;
 * BENCH_SOAK_SECONDS (default 60) is the length of the streamed soak, run once per target at the end.
 *
 * Two more sections follow, each with processes of its own, its table and its results file: the Responses and
 * Messages APIs against chat completions (bench/support/faces.ts, `faces.json`), and the gateway on a network
 * store against one on a local store (bench/support/remote_store.ts, `remote_store.json`), and streamed answers
 * against the bare proxy (bench/support/streams.ts, `streams.json`), and a gateway and a bare proxy just
 * started, before any load (bench/support/fresh_start.ts, `fresh_start.json`). `--only faces`, `--only remote`,
 * `--only streams`, `--only fresh` or `--only core` (or a comma-separated list) runs just those.
 */
import { memoryOf, runDeno } from "./support/spawn.ts";
import { startBenchTrio } from "./support/gateway_setup.ts";
import { chooseLoadTool, type LoadResult, type LoadTool, runLoad } from "./support/load.ts";
import { median } from "./support/streaming.ts";
import { ollamaTarget, type Target, TARGET_NAMES, type TargetName } from "./support/targets.ts";
import { type Figures, peakRssTargetMb, type Row, rows } from "./support/report.ts";
import { publishSection } from "./support/results.ts";
import { streamedSoak } from "./support/soak.ts";
import { streamingFigures } from "./support/core_streaming.ts";
import { upstreamClientFigures, type UpstreamFigures } from "./support/upstream_clients.ts";
import {
  checked,
  inRounds,
  loadInRounds,
  type LoadTarget,
  perRound,
  type RoundRun,
} from "./support/rounds.ts";
import { facesFigures, facesRows } from "./support/faces.ts";
import { remoteStoreFigures, remoteStoreRows } from "./support/remote_store.ts";
import { streamsFigures, streamsRows } from "./support/streams.ts";
import { freshStartFigures, freshStartRows } from "./support/fresh_start.ts";
import { parseArgs } from "node:util";

const ROUNDS = Math.max(1, Number(Deno.env.get("BENCH_ROUNDS") ?? 5));
const SOAK_SECONDS = Math.max(15, Number(Deno.env.get("BENCH_SOAK_SECONDS") ?? 60));
const SECONDS = Math.max(1, Number(Deno.env.get("BENCH_SECONDS") ?? 3));
const CONNECTIONS = 64;
const FIRST_BYTE_SAMPLES = 60;
const LONG_STREAM_CHUNKS = 20_000;

const log = (line: string) => console.error(`bench: ${line}`);

/** `pids`: the process each target's figures are about (the backend for direct; the gateway for A and B). */
async function httpFigures(
  tool: LoadTool,
  targets: Record<TargetName, Target>,
  pids: Record<TargetName, number>,
) {
  const loads = Object.fromEntries(
    TARGET_NAMES.map((n) => [n, { spec: targets[n].whole, pid: pids[n] }]),
  ) as Record<TargetName, LoadTarget>;
  const options = { tool, rounds: ROUNDS, seconds: SECONDS, connections: CONNECTIONS, log };
  const { single, loaded } = await loadInRounds(loads, { ...options, what: "whole answers" });

  /** Each round's figure of `name` minus the direct one's. */
  const overDirect = (name: TargetName, pick: (r: LoadResult) => number) =>
    single[name].map((r, i) => pick(r) - pick(single.direct[i]));
  const added = (name: TargetName, pick: (r: LoadResult) => number) => median(overDirect(name, pick));
  const mid = (list: RoundRun[], pick: (r: RoundRun) => number) => median(list.map(pick));
  const p50 = (r: LoadResult) => r.p50Us;
  const p99 = (r: LoadResult) => r.p99Us;
  const rps = (r: LoadResult) => r.requestsPerSec;
  const cpu = (r: RoundRun) => r.cpuUsPerRequest;
  const singleOf = (name: TargetName) => ({ p50Us: mid(single[name], p50), p99Us: mid(single[name], p99) });
  const loadedOf = (name: TargetName) => ({
    requestsPerSec: mid(loaded[name], rps),
    p99Us: mid(loaded[name], p99),
    cpuUsPerRequest: mid(loaded[name], cpu),
  });
  const ratio = (a: TargetName, b: TargetName, pick: (r: RoundRun) => number) =>
    inRounds(loaded[a], loaded[b], (x, y) => pick(x) / pick(y));
  return {
    single: {
      direct: singleOf("direct"),
      bare: singleOf("bare"),
      gateway: singleOf("gateway"),
      gatewayB: singleOf("gatewayB"),
      addedBare: { p50Us: added("bare", p50), p99Us: added("bare", p99) },
      addedGateway: { p50Us: added("gateway", p50), p99Us: added("gateway", p99) },
      addedGatewayB: { p50Us: added("gatewayB", p50), p99Us: added("gatewayB", p99) },
      // Within each round, as every comparison of two targets: a difference of two medians mixes rounds the
      // machine ran fast with rounds it ran slow, when the host's speed changes between them.
      overBareP50Us: {
        gateway: perRound(single.gateway, single.bare, (g, b) => p50(g) - p50(b)),
        gatewayB: perRound(single.gatewayB, single.bare, (g, b) => p50(g) - p50(b)),
      },
    },
    loaded: {
      connections: CONNECTIONS,
      direct: loadedOf("direct"),
      bare: loadedOf("bare"),
      gateway: loadedOf("gateway"),
      gatewayB: loadedOf("gatewayB"),
      gatewayToBare: ratio("gateway", "bare", rps),
      gatewayBToBare: ratio("gatewayB", "bare", rps),
      gatewayCpuToBare: ratio("gateway", "bare", cpu),
      gatewayBCpuToBare: ratio("gatewayB", "bare", cpu),
    },
    formatBToA: {
      requestsPerSec: ratio("gatewayB", "gateway", rps),
      cpuUsPerRequest: ratio("gatewayB", "gateway", cpu),
      addedP50Us: inRounds(overDirect("gatewayB", p50), overDirect("gateway", p50), (b, a) => b / a),
    },
  };
}

/**
 * Checks that each target answers the bench's question with a 200 before load is put on it (format B's whole
 * answer carries the backend's text in message.content, format A's in choices[0].message.content).
 */
async function smokeTest(targets: Record<TargetName, Target>) {
  for (const t of Object.values(targets)) {
    const res = await fetch(t.whole.url, { method: "POST", headers: t.whole.headers, body: t.whole.body });
    const text = await res.text();
    if (res.status !== 200 || !text.includes("Hello from the bench backend")) {
      throw new Error(`${t.name} answered ${res.status}: ${text.slice(0, 300)}`);
    }
  }
}

/** The gateway against the bare proxy and the backend: `bench/results/latest.json`. */
async function coreSection(tool: LoadTool) {
  const started = new Date();
  let stopTrio: (() => Promise<void>) | undefined;
  let http: Awaited<ReturnType<typeof httpFigures>>;
  let streaming: Awaited<ReturnType<typeof streamingFigures>>;
  let peakRssMb: number;
  let bareRssMb: number;
  let soak: Figures["soak"];
  let upstream: UpstreamFigures;
  try {
    const { backend, bare, gateway, targets, stop } = await startBenchTrio();
    stopTrio = stop;
    await smokeTest(targets);
    http = await httpFigures(tool, targets, {
      direct: backend.pid,
      bare: bare.pid,
      gateway: gateway.child.pid,
      gatewayB: gateway.child.pid,
    });
    streaming = await streamingFigures(targets, gateway.child.pid, {
      rounds: ROUNDS,
      firstByteSamples: FIRST_BYTE_SAMPLES,
      longStreamChunks: LONG_STREAM_CHUNKS,
      log,
      warm: (t) => runLoad(tool, { ...targets[t].streamedLoad, connections: CONNECTIONS, seconds: 2 }),
    });
    // VmHWM only grows, so one reading after all the load is the peak over all of it.
    peakRssMb = (await memoryOf(gateway.child.pid))?.peakMb ?? NaN;
    bareRssMb = (await memoryOf(bare.pid))?.peakMb ?? NaN;
    upstream = await upstreamClientFigures({
      tool,
      backendUrl: backend.url,
      bare: { url: bare.url, pid: bare.pid },
      spec: (url) => ollamaTarget("bare", url).whole,
      rounds: ROUNDS,
      seconds: SECONDS,
      connections: CONNECTIONS,
      check: checked,
      log,
    });
    const soakOptions = { seconds: SOAK_SECONDS, connections: CONNECTIONS };
    log(`streamed soak: ${SOAK_SECONDS} s on the gateway, then on the bare proxy`);
    soak = {
      seconds: SOAK_SECONDS,
      connections: CONNECTIONS,
      gateway: await streamedSoak(tool, targets.gateway.streamedLoad, gateway.child.pid, {
        ...soakOptions,
        check: (r) => checked("gateway soak", r),
      }),
      bare: await streamedSoak(tool, targets.bare.streamedLoad, bare.pid, {
        ...soakOptions,
        check: (r) => checked("bare soak", r),
      }),
    };
  } finally {
    await stopTrio?.();
  }
  log("key lookup and admission, 10 vs 100,000 keys");
  const store = JSON.parse(await runDeno(["run", "-A", "bench/store_scale.ts", String(ROUNDS)]));

  const figures: Figures = {
    single: http.single,
    loaded: http.loaded,
    streaming: streaming.streaming,
    formatBToA: { ...http.formatBToA, firstByteUs: streaming.firstByteBToA },
    memory: {
      gatewayPeakRssMb: peakRssMb,
      bareProxyPeakRssMb: bareRssMb,
      gatewayPeakTargetMb: peakRssTargetMb(bareRssMb),
    },
    soak,
    upstream,
    store: { lookup: store.lookup, admission: store.admission },
  };
  await publishSection("latest.json", {
    tool,
    started,
    settings: {
      rounds: ROUNDS,
      secondsPerRun: SECONDS,
      connections: CONNECTIONS,
      longStreamChunks: LONG_STREAM_CHUNKS,
    },
    figures,
    table: rows(figures),
    log,
  });
}

/**
 * A section whose figures stand on their own: measured, printed as a table and written to
 * `bench/results/<file>`.
 */
async function separateSection<F>(
  tool: LoadTool,
  file: string,
  measure: (options: SectionOptions) => Promise<F>,
  table: (figures: F) => Row[],
) {
  const started = new Date();
  const figures = await measure({ tool, rounds: ROUNDS, seconds: SECONDS, connections: CONNECTIONS, log });
  await publishSection(file, { tool, started, figures, table: table(figures), log });
}

interface SectionOptions {
  tool: LoadTool;
  rounds: number;
  seconds: number;
  connections: number;
  log: (line: string) => void;
}

const SECTIONS = {
  core: coreSection,
  faces: (tool: LoadTool) => separateSection(tool, "faces.json", facesFigures, facesRows),
  remote: (tool: LoadTool) => separateSection(tool, "remote_store.json", remoteStoreFigures, remoteStoreRows),
  streams: (tool: LoadTool) => separateSection(tool, "streams.json", streamsFigures, streamsRows),
  fresh: (tool: LoadTool) => separateSection(tool, "fresh_start.json", freshStartFigures, freshStartRows),
};
type Section = keyof typeof SECTIONS;

/** `--only faces,remote` (or `--only=faces`, or `--only faces --only remote`): those sections; else all. */
function chosenSections(args: string[]): Section[] {
  const { values } = parseArgs({ args, options: { only: { type: "string", multiple: true } } });
  const names = (values.only ?? []).flatMap((o) => o.split(",")).map((o) => o.trim()).filter(Boolean);
  const unknown = names.filter((n) => !(n in SECTIONS));
  if (unknown.length) {
    throw new Error(
      `unknown section ${unknown.join(", ")}: choose among ${Object.keys(SECTIONS).join(", ")}`,
    );
  }
  return names.length ? [...new Set(names)] as Section[] : Object.keys(SECTIONS) as Section[];
}

async function main() {
  const sections = chosenSections(Deno.args);
  const tool = await chooseLoadTool(log);
  log(`load generator: ${tool}; ${ROUNDS} rounds of ${SECONDS} s; ${sections.join(", ")}`);
  for (const section of sections) await SECTIONS[section](tool);
}

await main();
