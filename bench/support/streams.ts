/**
 * @module The streaming rows: short streamed chats (8 chunks) at full concurrency through the bare proxy and
 * through the gateway in both formats, in the same rounds (order rotating): streams per second and CPU per
 * stream, each held to the bare proxy's within a round; the processes' peak memory after that load; and a
 * soak of long streams (`LONG_CHUNKS` chunks each, both formats at once) whose every chunk is counted and
 * checked in order, with the gateway's resident memory at 10 s and at the end.
 */
import type { LoadTool } from "./load.ts";
import { startBenchTrio } from "./gateway_setup.ts";
import { memoryOf } from "./spawn.ts";
import { loadInRounds, type LoadTarget, perRound, type RoundRun } from "./rounds.ts";
import { median } from "./streaming.ts";
import { count, pct, type Row, times, us } from "./report.ts";
import { type LongSoakFigures, longStreamSoak } from "./long_soak.ts";

const GATEWAYS = ["gateway", "gatewayB"] as const;
type Gateway = typeof GATEWAYS[number];
type Target = "bare" | Gateway;

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
  /** Each format's figure ÷ the bare proxy's, within a round: the median, and round by round. */
  toBare: Record<Gateway, { streamsPerSec: number[]; cpuUsPerStream: number[] }>;
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
  let loaded: Record<Target, RoundRun[]>;
  let peakRssMb: StreamsFigures["peakRssMb"];
  let soak: LongSoakFigures;
  try {
    const { bare, gateway, targets: t, stop } = await startBenchTrio();
    stopTrio = stop;
    const pid = gateway.child.pid;
    const targets: Record<Target, LoadTarget> = {
      bare: { spec: t.bare.streamedLoad, pid: bare.pid },
      gateway: { spec: t.gateway.streamedLoad, pid },
      gatewayB: { spec: t.gatewayB.streamedLoad, pid },
    };
    ({ loaded } = await loadInRounds(targets, { ...options, what: "streams" }));
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
    await stopTrio?.();
  }
  const of = (pick: (r: RoundRun) => number) =>
    Object.fromEntries(
      (["bare", ...GATEWAYS] as const).map((n) => [n, median(loaded[n].map(pick))]),
    ) as Record<
      Target,
      number
    >;
  const ratios = (g: Gateway, pick: (r: RoundRun) => number) =>
    perRound(loaded[g], loaded.bare, (x, b) => pick(x) / pick(b));
  return {
    rounds: options.rounds,
    secondsPerRun: options.seconds,
    connections: options.connections,
    streamsPerSec: of((r) => r.requestsPerSec),
    cpuUsPerStream: of((r) => r.cpuUsPerRequest),
    toBare: Object.fromEntries(GATEWAYS.map((g) => [g, {
      streamsPerSec: ratios(g, (r) => r.requestsPerSec),
      cpuUsPerStream: ratios(g, (r) => r.cpuUsPerRequest),
    }])) as StreamsFigures["toBare"],
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
