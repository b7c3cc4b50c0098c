/**
 * @module The streaming rows: short streamed chats (8 chunks) at full concurrency through the bare proxy and
 * through the gateway in both formats, in the same rounds (order rotating): streams per second and CPU per
 * stream, each held to the bare proxy's within a round; the processes' peak memory after that load; and a
 * soak of long streams (`LONG_CHUNKS` chunks each, both formats at once) whose every chunk is counted and
 * checked in order, with the gateway's resident memory at 10 s and at the end.
 *
 * What bounds streams per second: each process runs its JavaScript and its HTTP engine on one main thread, and
 * under this load that thread is busy all the time in both, so streams per second follow main-thread CPU per
 * stream. The rounds also load the transport alone (`bench/client_proxy.ts gateway-client`: the runtime's
 * server and the backend client the gateway uses, the answer handed back, no pipeline, the gateway's V8
 * flags), and report each target's main-thread CPU per stream ÷ the bare proxy's: what the gateway's own work
 * costs beyond its transport, against the room the streams target leaves it.
 */
import type { LoadTool } from "./load.ts";
import { startBenchTrio, startTaskFlags } from "./gateway_setup.ts";
import { type Child, memoryOf } from "./spawn.ts";
import { spawnClientProxy } from "./upstream_clients.ts";
import { ollamaTarget } from "./targets.ts";
import { loadInRounds, type LoadTarget, perRound, type RoundRun } from "./rounds.ts";
import { median } from "./streaming.ts";
import { count, pct, type Row, times, us } from "./report.ts";
import { type LongSoakFigures, longStreamSoak } from "./long_soak.ts";

const GATEWAYS = ["gateway", "gatewayB"] as const;
type Gateway = typeof GATEWAYS[number];
type Target = "bare" | "transport" | Gateway;
/** What is held to the bare proxy. */
const COMPARED = ["transport", ...GATEWAYS] as const;
const TARGETS = ["bare", ...COMPARED] as const;

const STREAMS_TO_BARE = 0.8;
const CPU_TO_BARE = 1.5;
const RSS_TO_BARE = 1.25;
const RSS_GROWTH = 1.1;
const LONG_CHUNKS = 200;
const LABEL: Record<Gateway, string> = { gateway: "format A", gatewayB: "format B" };

export interface StreamsFigures {
  rounds: number;
  secondsPerRun: number;
  connections: number;
  streamsPerSec: Record<Target, number>;
  cpuUsPerStream: Record<Target, number>;
  mainUsPerStream: Record<Target, number>;
  /** Each format's figure ÷ the bare proxy's, within a round: the median, and round by round. */
  toBare: Record<Gateway, { streamsPerSec: number[]; cpuUsPerStream: number[] }>;
  /** Main-thread CPU per stream ÷ the bare proxy's, round by round; and the transport's streams per second ÷. */
  mainToBare: Record<typeof COMPARED[number], number[]>;
  transportStreamsToBare: number[];
  peakRssMb: { gateway: number; bare: number };
  soak: LongSoakFigures;
}

export async function streamsFigures(options: {
  tool: LoadTool;
  rounds: number;
  seconds: number;
  connections: number;
  log: (line: string) => void;
}): Promise<StreamsFigures> {
  const soakSeconds = Math.max(15, Number(Deno.env.get("BENCH_SOAK_SECONDS") ?? 60));
  let stopTrio: (() => Promise<void>) | undefined;
  let transport: Child | undefined;
  let loaded: Record<Target, RoundRun[]>;
  let peakRssMb: StreamsFigures["peakRssMb"];
  let soak: LongSoakFigures;
  try {
    const { backend, bare, gateway, targets: t, stop } = await startBenchTrio();
    stopTrio = stop;
    const v8 = (await startTaskFlags()).filter((flag) => flag.startsWith("--v8-flags="));
    transport = await spawnClientProxy("gateway-client", backend.url, v8);
    const pid = gateway.child.pid;
    const targets: Record<Target, LoadTarget> = {
      bare: { spec: t.bare.streamedLoad, pid: bare.pid },
      transport: { spec: ollamaTarget("bare", transport.url).streamedLoad, pid: transport.pid },
      gateway: { spec: t.gateway.streamedLoad, pid },
      gatewayB: { spec: t.gatewayB.streamedLoad, pid },
    };
    ({ loaded } = await loadInRounds(targets, { ...options, what: "streams", single: false }));
    // VmHWM only grows: one reading after the load is its peak.
    peakRssMb = {
      gateway: (await memoryOf(pid))?.peakMb ?? NaN,
      bare: (await memoryOf(bare.pid))?.peakMb ?? NaN,
    };
    options.log(`long streams: ${soakSeconds} s soak of ${LONG_CHUNKS}-chunk streams, both formats`);
    soak = await longStreamSoak([t.gateway.streamed, t.gatewayB.streamed], pid, {
      seconds: soakSeconds,
      connections: options.connections,
      chunks: LONG_CHUNKS,
    });
  } finally {
    await transport?.stop();
    await stopTrio?.();
  }
  const of = (pick: (r: RoundRun) => number) =>
    Object.fromEntries(
      TARGETS.map((n) => [n, median(loaded[n].map(pick))]),
    ) as Record<
      Target,
      number
    >;
  const ratios = (g: typeof COMPARED[number], pick: (r: RoundRun) => number) =>
    perRound(loaded[g], loaded.bare, (x, b) => pick(x) / pick(b));
  return {
    rounds: options.rounds,
    secondsPerRun: options.seconds,
    connections: options.connections,
    streamsPerSec: of((r) => r.requestsPerSec),
    cpuUsPerStream: of((r) => r.cpuUsPerRequest),
    mainUsPerStream: of((r) => r.mainUsPerRequest),
    toBare: Object.fromEntries(GATEWAYS.map((g) => [g, {
      streamsPerSec: ratios(g, (r) => r.requestsPerSec),
      cpuUsPerStream: ratios(g, (r) => r.cpuUsPerRequest),
    }])) as StreamsFigures["toBare"],
    mainToBare: Object.fromEntries(
      COMPARED.map((n) => [n, ratios(n, (r) => r.mainUsPerRequest)]),
    ) as StreamsFigures["mainToBare"],
    transportStreamsToBare: ratios("transport", (r) => r.requestsPerSec),
    peakRssMb,
    soak,
  };
}

const rounds = (ratios: number[]) => ratios.map((r) => r.toFixed(2)).join(", ");

export function streamsRows(f: StreamsFigures): Row[] {
  const c = f.connections;
  const rssRatio = f.peakRssMb.gateway / f.peakRssMb.bare;
  const growth = f.soak.rssEndMb / f.soak.rssAt10sMb;
  return [
    {
      figure: `Short streams per second, ${c} connections: bare proxy / format A / format B`,
      value: (["bare", ...GATEWAYS] as const).map((t) => count(f.streamsPerSec[t])).join(" / "),
      target: "",
    },
    ...GATEWAYS.flatMap((g): Row[] => {
      const speed = median(f.toBare[g].streamsPerSec);
      const cpu = median(f.toBare[g].cpuUsPerStream);
      return [
        {
          figure: `Streams per second ÷ bare proxy, ${c} connections (${LABEL[g]})`,
          value: `${pct(speed)} (rounds ${rounds(f.toBare[g].streamsPerSec)})`,
          target: `≥ ${pct(STREAMS_TO_BARE)}`,
          pass: speed >= STREAMS_TO_BARE,
        },
        {
          figure: `CPU per stream, ${c} connections: ${LABEL[g]} / bare proxy (own process)`,
          value: `${us(f.cpuUsPerStream[g])} / ${us(f.cpuUsPerStream.bare)} (${times(cpu)}; rounds ${
            rounds(f.toBare[g].cpuUsPerStream)
          })`,
          target: `≤ ${CPU_TO_BARE} × bare proxy`,
          pass: cpu <= CPU_TO_BARE,
        },
      ];
    }),
    {
      figure:
        `Main-thread CPU per stream ÷ bare proxy's, ${c} connections: transport alone / format A / format B`,
      value: COMPARED.map((n) => median(f.mainToBare[n]).toFixed(2)).join(" / ") +
        ` (bare proxy ${us(f.mainUsPerStream.bare)}; transport alone serves ${
          pct(median(f.transportStreamsToBare))
        } of its streams per second)`,
      target: "",
    },
    {
      figure:
        "Gateway's own main-thread work per stream beyond the transport ÷ bare proxy's main thread (A / B)",
      value: GATEWAYS.map((g) => median(perRound(f.mainToBare[g], f.mainToBare.transport, (x, t) => x - t)))
        .map((r) => r.toFixed(2)).join(" / "),
      target: `room left by the streams target: ${
        (1 / STREAMS_TO_BARE - median(f.mainToBare.transport)).toFixed(2)
      }`,
    },
    {
      figure: "Peak memory after the streaming load (RSS, VmHWM): gateway / bare proxy",
      value: `${f.peakRssMb.gateway.toFixed(1)} / ${f.peakRssMb.bare.toFixed(1)} MB (${times(rssRatio)})`,
      target: `≤ ${RSS_TO_BARE} × bare proxy`,
      pass: rssRatio <= RSS_TO_BARE,
    },
    {
      figure: `Long-stream soak, ${f.soak.seconds} s, ${f.soak.connections} connections, ${f.soak.chunks} ` +
        "chunks a stream: streams / chunks delivered / out of order or missing",
      value: `${count(f.soak.streams)} / ${count(f.soak.chunksDelivered)} / ${count(f.soak.faults)}`,
      target: "none out of order or missing",
      pass: f.soak.faults === 0 && f.soak.streams > 0,
    },
    {
      figure: "Long-stream soak: gateway RSS at 10 s → at the end",
      value: `${f.soak.rssAt10sMb.toFixed(1)} → ${f.soak.rssEndMb.toFixed(1)} MB (${times(growth)})`,
      target: `end ≤ ${RSS_GROWTH} × at 10 s`,
      pass: growth <= RSS_GROWTH,
    },
  ];
}
