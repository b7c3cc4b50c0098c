/**
 * The bench's outcome: each figure with its target and whether it was met, as a markdown table for people and
 * as JSON (with the machine it ran on) for comparing runs.
 */

export interface Figures {
  /** One connection: latency percentiles per target, µs, and what each proxy adds to the direct call. */
  single: {
    direct: { p50Us: number; p99Us: number };
    bare: { p50Us: number; p99Us: number };
    gateway: { p50Us: number; p99Us: number };
    addedBare: { p50Us: number; p99Us: number };
    addedGateway: { p50Us: number; p99Us: number };
  };
  /** 64 connections: requests per second and p99 latency per target; gateway ÷ bare proxy throughput. */
  loaded: {
    connections: number;
    /** cpuUsPerRequest: CPU time of the target's own process per request (direct: the backend's). */
    direct: { requestsPerSec: number; p99Us: number; cpuUsPerRequest: number };
    bare: { requestsPerSec: number; p99Us: number; cpuUsPerRequest: number };
    gateway: { requestsPerSec: number; p99Us: number; cpuUsPerRequest: number };
    gatewayToBare: number;
  };
  streaming: {
    directFirstByteUs: number;
    bareFirstByteUs: number;
    gatewayFirstByteUs: number;
    gatewayOverheadUs: number;
    directChunksPerSec: number;
    gatewayChunksPerSec: number;
    /** The gateway process's CPU time per chunk of a long streamed answer. */
    gatewayCpuUsPerChunk: number;
  };
  memory: { gatewayPeakRssMb: number; bareProxyPeakRssMb: number };
  /** The bare proxy with each upstream client: throughput, CPU per request, throughput ÷ the fetch proxy's. */
  upstream: Record<string, { requestsPerSec: number; cpuUsPerRequest: number; toFetch: number }>;
  /** Streamed chats at full concurrency for a long run: resident memory early and at the end. */
  soak: {
    seconds: number;
    connections: number;
    gateway: { requests: number; rssAt10sMb: number; rssEndMb: number };
    bare: { requests: number; rssAt10sMb: number; rssEndMb: number };
  };
  store: {
    lookup: { smallUs: number; largeUs: number; ratio: number };
    admission: { smallUs: number; largeUs: number; ratio: number };
  };
}

export interface Row {
  figure: string;
  value: string;
  target: string;
  /** undefined: shown for reference, no target. */
  pass?: boolean;
}

const us = (n: number) => `${Math.round(n).toLocaleString("en-US")} µs`;
const ms = (n: number) => `${(n / 1000).toFixed(2)} ms`;
const count = (n: number) => Math.round(n).toLocaleString("en-US");
const pct = (n: number) => `${Math.round(n * 100)}%`;
const mb = (n: number) => `${n.toFixed(1)} MB`;
const signedPct = (ratio: number) => `${ratio >= 1 ? "+" : "−"}${Math.abs(Math.round((ratio - 1) * 100))}%`;

export function rows(f: Figures): Row[] {
  const { single: s, loaded: l, streaming: st, store } = f;
  const scale = (what: string, m: Figures["store"]["lookup"]): Row => ({
    figure: `${what}, 100,000 keys vs 10 keys`,
    value: `${us(m.largeUs)} vs ${us(m.smallUs)} (${signedPct(m.ratio)})`,
    target: "within 10%",
    pass: m.ratio <= 1.1,
  });
  return [
    {
      figure: "Added latency p50, 1 connection (gateway − direct)",
      value: us(s.addedGateway.p50Us),
      target: "≤ 250 µs",
      pass: s.addedGateway.p50Us <= 250,
    },
    {
      figure: "Added latency p99, 1 connection (gateway − direct)",
      value: us(s.addedGateway.p99Us),
      target: "",
    },
    {
      figure: "Added latency p50 / p99, 1 connection (bare proxy − direct)",
      value: `${us(s.addedBare.p50Us)} / ${us(s.addedBare.p99Us)}`,
      target: "reference",
    },
    {
      figure: "Latency p50, 1 connection: direct / bare proxy / gateway",
      value: `${us(s.direct.p50Us)} / ${us(s.bare.p50Us)} / ${us(s.gateway.p50Us)}`,
      target: "",
    },
    {
      figure: `Throughput, ${l.connections} connections: direct / bare proxy / gateway (req/s)`,
      value: `${count(l.direct.requestsPerSec)} / ${count(l.bare.requestsPerSec)} / ${
        count(l.gateway.requestsPerSec)
      }`,
      target: "",
    },
    {
      figure: "Gateway throughput ÷ bare proxy",
      value: pct(l.gatewayToBare),
      target: "≥ 70%",
      pass: l.gatewayToBare >= 0.7,
    },
    {
      figure: `p99, ${l.connections} connections: direct / bare proxy / gateway`,
      value: `${ms(l.direct.p99Us)} / ${ms(l.bare.p99Us)} / ${ms(l.gateway.p99Us)}`,
      target: "",
    },
    {
      figure: `CPU per request, ${l.connections} connections: bare proxy / gateway (own process)`,
      value: `${us(l.bare.cpuUsPerRequest)} / ${us(l.gateway.cpuUsPerRequest)}`,
      target: "",
    },
    {
      figure: "Streaming first-byte overhead (gateway − direct)",
      value: us(st.gatewayOverheadUs),
      target: "≤ 1 ms",
      pass: st.gatewayOverheadUs <= 1000,
    },
    {
      figure: "Streaming first byte: direct / bare proxy / gateway",
      value: `${us(st.directFirstByteUs)} / ${us(st.bareFirstByteUs)} / ${us(st.gatewayFirstByteUs)}`,
      target: "",
    },
    {
      figure: "Streamed chunks per second: gateway (direct)",
      value: `${count(st.gatewayChunksPerSec)} (${count(st.directChunksPerSec)})`,
      target: "",
    },
    {
      figure: "Gateway CPU per streamed chunk (own process)",
      value: `${st.gatewayCpuUsPerChunk.toFixed(1)} µs`,
      target: "",
    },
    {
      figure: "Gateway peak memory under load (RSS, VmHWM)",
      value: `${f.memory.gatewayPeakRssMb.toFixed(1)} MB`,
      target: "≤ 150 MB",
      pass: f.memory.gatewayPeakRssMb <= 150,
    },
    {
      figure: "Bare proxy peak memory under the same load (RSS, VmHWM)",
      value: `${f.memory.bareProxyPeakRssMb.toFixed(1)} MB`,
      target: "reference",
    },
    ...Object.entries(f.upstream).map(([client, u]) => ({
      figure:
        `Upstream client ${client}: bare proxy at ${l.connections} connections (req/s, CPU per request)`,
      value: `${count(u.requestsPerSec)} (× ${u.toFetch.toFixed(2)} of fetch), ${us(u.cpuUsPerRequest)}`,
      target: "reference",
    })),
    ...soakRows(f.soak),
    scale("Key lookup (digest + indexed read, uncached)", store.lookup),
    scale("Admission (IP list, rpm, 6 quotas)", store.admission),
  ];
}

function soakRows(soak: Figures["soak"]): Row[] {
  const { gateway: g, bare: b } = soak;
  const run = `${soak.seconds} s streamed, ${soak.connections} connections`;
  return [
    {
      figure: `Soak (${run}): gateway RSS at 10 s → end`,
      value: `${mb(g.rssAt10sMb)} → ${mb(g.rssEndMb)} (× ${(g.rssEndMb / g.rssAt10sMb).toFixed(2)})`,
      target: "end ≤ 1.2 × at 10 s",
      pass: g.rssEndMb <= 1.2 * g.rssAt10sMb,
    },
    {
      figure: `Soak (${run}): gateway RSS at the end ÷ the bare proxy's`,
      value: `${mb(g.rssEndMb)} ÷ ${mb(b.rssEndMb)} (× ${(g.rssEndMb / b.rssEndMb).toFixed(2)})`,
      target: "≤ 2 ×",
      pass: g.rssEndMb <= 2 * b.rssEndMb,
    },
    {
      figure: `Soak (${run}): streams served: gateway / bare proxy (bare RSS at 10 s → end)`,
      value: `${count(g.requests)} / ${count(b.requests)} (${mb(b.rssAt10sMb)} → ${mb(b.rssEndMb)})`,
      target: "",
    },
  ];
}

export function markdownTable(table: Row[]): string {
  const verdict = (r: Row) => r.pass === undefined ? "" : r.pass ? "pass" : "miss";
  const lines = [
    "| Figure | Value | Target | Result |",
    "| --- | --- | --- | --- |",
    ...table.map((r) => `| ${r.figure} | ${r.value} | ${r.target} | ${verdict(r)} |`),
  ];
  return lines.join("\n");
}

async function cpuModel(): Promise<string | undefined> {
  try {
    return /^model name\s*:\s*(.+)$/m.exec(await Deno.readTextFile("/proc/cpuinfo"))?.[1];
  } catch {
    return undefined;
  }
}

export async function machineInfo(extra: Record<string, unknown>) {
  return {
    os: `${Deno.build.os} ${Deno.osRelease()}`,
    arch: Deno.build.arch,
    cpu: await cpuModel(),
    cores: navigator.hardwareConcurrency,
    memoryMb: Math.round(Deno.systemMemoryInfo().total / 1024 / 1024),
    loadAverage: Deno.loadavg(),
    deno: Deno.version.deno,
    v8: Deno.version.v8,
    ...extra,
  };
}
