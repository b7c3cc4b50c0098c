/**
 * The bench's outcome: each figure with its target and whether it was met, as a markdown table for people and
 * as JSON (with the machine it ran on) for comparing runs.
 */
import { median } from "./streaming.ts";
import type { Figures } from "./figures.ts";

export type { Figures };

export interface Row {
  figure: string;
  value: string;
  target: string;
  /** undefined: shown for reference, no target. */
  pass?: boolean;
}

export const us = (n: number) => `${Math.round(n).toLocaleString("en-US")} µs`;
export const ms = (n: number) => `${(n / 1000).toFixed(2)} ms`;
export const count = (n: number) => Math.round(n).toLocaleString("en-US");
export const pct = (n: number) => `${Math.round(n * 100)}%`;
const mb = (n: number) => `${n.toFixed(1)} MB`;
const signedPct = (ratio: number) => `${ratio >= 1 ? "+" : "−"}${Math.abs(Math.round((ratio - 1) * 100))}%`;
export const times = (ratio: number) => `× ${ratio.toFixed(2)}`;

const ADDED_P50_TARGET_US = 250;
const THROUGHPUT_TO_BARE = 0.7;
const CPU_TO_BARE = 2;
const FIRST_BYTE_OVER_BARE_US = 150;
/** Whole answers at 1 connection: what the gateway adds beyond what the bare proxy adds. */
const ADDED_P50_OVER_BARE_US = 40;
/** Format B's figures may differ from format A's by this fraction either way. */
const B_TO_A_SPREAD = 0.1;
const PEAK_RSS_FLOOR_MB = 150;
const PEAK_RSS_TO_BARE = 1.25;

/**
 * The gateway's peak memory target: what the runtime itself takes under the same load, with a quarter more,
 * but never below 150 MB, so a lean bare proxy does not make the target stricter than the old fixed one.
 */
export function peakRssTargetMb(bareProxyPeakMb: number): number {
  return Math.max(PEAK_RSS_FLOOR_MB, PEAK_RSS_TO_BARE * bareProxyPeakMb);
}

export function rows(f: Figures): Row[] {
  const { single: s, loaded: l, streaming: st, store } = f;
  const scale = (what: string, m: Figures["store"]["lookup"]): Row => ({
    figure: `${what}, 100,000 keys vs 10 keys`,
    value: `${us(m.largeUs)} vs ${us(m.smallUs)} (${signedPct(m.ratio)})`,
    target: "within 10%",
    pass: m.ratio <= 1.1,
  });
  const gateways = [
    {
      name: "gateway",
      single: s.addedGateway,
      singleOverBare: s.overBareP50Us.gateway,
      loaded: l.gateway,
      toBare: l.gatewayToBare,
      cpuToBare: l.gatewayCpuToBare,
      overBare: st.gatewayOverBareUs,
    },
    {
      name: "gateway (format B)",
      single: s.addedGatewayB,
      singleOverBare: s.overBareP50Us.gatewayB,
      loaded: l.gatewayB,
      toBare: l.gatewayBToBare,
      cpuToBare: l.gatewayBCpuToBare,
      overBare: st.gatewayBOverBareUs,
    },
  ];
  return [
    ...gateways.map((g): Row => ({
      figure: `Added latency p50, 1 connection (${g.name} − direct)`,
      value: us(g.single.p50Us),
      target: `≤ ${ADDED_P50_TARGET_US} µs`,
      pass: g.single.p50Us <= ADDED_P50_TARGET_US,
    })),
    ...gateways.map((g): Row => ({
      figure: `Added latency p50 over the bare proxy's, 1 connection (${g.name} − bare proxy)`,
      value: `${us(median(g.singleOverBare))} (rounds ${
        g.singleOverBare.map((d) => d.toFixed(0)).join(", ")
      })`,
      target: `≤ ${ADDED_P50_OVER_BARE_US} µs`,
      pass: median(g.singleOverBare) <= ADDED_P50_OVER_BARE_US,
    })),
    ...gateways.map((g): Row => ({
      figure: `Added latency p99, 1 connection (${g.name} − direct)`,
      value: us(g.single.p99Us),
      target: "",
    })),
    {
      figure: "Added latency p50 / p99, 1 connection (bare proxy − direct)",
      value: `${us(s.addedBare.p50Us)} / ${us(s.addedBare.p99Us)}`,
      target: "reference",
    },
    {
      figure: "Latency p50, 1 connection: direct / bare proxy / gateway / gateway (format B)",
      value: [s.direct, s.bare, s.gateway, s.gatewayB].map((t) => us(t.p50Us)).join(" / "),
      target: "",
    },
    {
      figure:
        `Throughput, ${l.connections} connections: direct / bare proxy / gateway / gateway (format B) ` +
        "(req/s)",
      value: [l.direct, l.bare, l.gateway, l.gatewayB].map((t) => count(t.requestsPerSec)).join(" / "),
      target: "",
    },
    ...gateways.map((g): Row => ({
      figure: `${g.name[0].toUpperCase()}${g.name.slice(1)} throughput ÷ bare proxy`,
      value: pct(g.toBare),
      target: `≥ ${pct(THROUGHPUT_TO_BARE)}`,
      pass: g.toBare >= THROUGHPUT_TO_BARE,
    })),
    {
      figure: `p99, ${l.connections} connections: direct / bare proxy / gateway`,
      value: `${ms(l.direct.p99Us)} / ${ms(l.bare.p99Us)} / ${ms(l.gateway.p99Us)}`,
      target: "",
    },
    {
      figure: `p99, ${l.connections} connections: gateway (format B)`,
      value: ms(l.gatewayB.p99Us),
      target: "",
    },
    ...gateways.map((g): Row => ({
      figure: `CPU per request, ${l.connections} connections: ${g.name} / bare proxy (own process)`,
      // The ratio is the median of each round's, so it need not equal the quotient of the two medians shown.
      value: `${us(g.loaded.cpuUsPerRequest)} / ${us(l.bare.cpuUsPerRequest)} (${times(g.cpuToBare)})`,
      target: `≤ ${CPU_TO_BARE} × bare proxy`,
      pass: g.cpuToBare <= CPU_TO_BARE,
    })),
    ...gateways.map((g): Row => ({
      figure: `Streaming first-byte overhead over the bare proxy (${g.name} − bare)`,
      value: us(g.overBare),
      target: `≤ ${FIRST_BYTE_OVER_BARE_US} µs`,
      pass: g.overBare <= FIRST_BYTE_OVER_BARE_US,
    })),
    {
      figure: "Streaming first-byte overhead (gateway − direct)",
      value: us(st.gatewayOverheadUs),
      target: "",
    },
    {
      figure: "Streaming first byte: direct / bare proxy / gateway / gateway (format B)",
      value: [st.directFirstByteUs, st.bareFirstByteUs, st.gatewayFirstByteUs, st.gatewayBFirstByteUs]
        .map(us).join(" / "),
      target: "",
    },
    ...formatBRows(f),
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
      target: `≤ ${Math.round(f.memory.gatewayPeakTargetMb)} MB (${
        f.memory.gatewayPeakTargetMb > PEAK_RSS_FLOOR_MB ? `${PEAK_RSS_TO_BARE} × bare` : "floor"
      })`,
      pass: f.memory.gatewayPeakRssMb <= f.memory.gatewayPeakTargetMb,
    },
    {
      figure: "Bare proxy peak memory under the same load (RSS, VmHWM)",
      value: `${f.memory.bareProxyPeakRssMb.toFixed(1)} MB`,
      target: "reference",
    },
    ...Object.entries(f.upstream).map(([client, u]) => ({
      figure:
        `Upstream client ${client}: bare proxy at ${l.connections} connections (req/s, CPU per request)`,
      value: `${count(u.requestsPerSec)} (${times(u.toFetch)} of fetch), ${us(u.cpuUsPerRequest)}`,
      target: "reference",
    })),
    ...soakRows(f.soak),
    scale("Key lookup (digest + indexed read, uncached)", store.lookup),
    scale("Admission (IP list, rpm, 6 quotas)", store.admission),
  ];
}

/** Format B against format A, figure by figure: B must stay within 10% of A either way. */
function formatBRows(f: Figures): Row[] {
  const { single: s, loaded: l, streaming: st, formatBToA: r } = f;
  const row = (figure: string, b: string, a: string, ratio: number): Row => ({
    figure: `Format B vs format A: ${figure}`,
    value: `${b} vs ${a} (${times(ratio)})`,
    target: `within ${pct(B_TO_A_SPREAD)}`,
    pass: Math.abs(ratio - 1) <= B_TO_A_SPREAD,
  });
  return [
    row(
      `throughput, ${l.connections} connections (req/s)`,
      count(l.gatewayB.requestsPerSec),
      count(l.gateway.requestsPerSec),
      r.requestsPerSec,
    ),
    row(
      `CPU per request, ${l.connections} connections`,
      us(l.gatewayB.cpuUsPerRequest),
      us(l.gateway.cpuUsPerRequest),
      r.cpuUsPerRequest,
    ),
    row("added latency p50, 1 connection", us(s.addedGatewayB.p50Us), us(s.addedGateway.p50Us), r.addedP50Us),
    row("streaming first byte", us(st.gatewayBFirstByteUs), us(st.gatewayFirstByteUs), r.firstByteUs),
  ];
}

function soakRows(soak: Figures["soak"]): Row[] {
  const { gateway: g, bare: b } = soak;
  const run = `${soak.seconds} s streamed, ${soak.connections} connections`;
  return [
    {
      figure: `Soak (${run}): gateway RSS at 10 s → end`,
      value: `${mb(g.rssAt10sMb)} → ${mb(g.rssEndMb)} (${times(g.rssEndMb / g.rssAt10sMb)})`,
      target: "end ≤ 1.2 × at 10 s",
      pass: g.rssEndMb <= 1.2 * g.rssAt10sMb,
    },
    {
      figure: `Soak (${run}): gateway RSS at the end ÷ the bare proxy's`,
      value: `${mb(g.rssEndMb)} ÷ ${mb(b.rssEndMb)} (${times(g.rssEndMb / b.rssEndMb)})`,
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
