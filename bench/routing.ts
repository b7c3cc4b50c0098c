/**
 * `deno task bench:routing`: one workload (multi-turn conversations from many clients, plus bursts) through
 * the gateway twice on identical fresh fleets, first with the plain weighted random draw, then with the
 * scheduler (loaded models, slots, wait queue, affinity). Prints one table and writes
 * bench/results/routing.json. Time is compressed (model loads of 400 ms, 4 ms per token) so it runs in a
 * couple of minutes on a small machine; the ratios, not the absolute figures, are the result.
 */
import { FLEET, startFleet } from "./routing_fleet.ts";
import { plan, runWorkload, type Sample, WORKLOAD } from "./routing_workload.ts";

type Policy = "weighted" | "scheduled";

interface Figures {
  requests: number;
  failed: number;
  ttftP50: number;
  ttftP95: number;
  completionMean: number;
  completionP95: number;
  wallMs: number;
  loads: number;
  cacheHitRate: number;
}

function percentile(values: number[], p: number): number {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  return sorted.length ? sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)] : NaN;
}

function summarize(samples: Sample[], wallMs: number, loads: number, hitRate: number): Figures {
  const ok = samples.filter((s) => s.ok);
  const totals = ok.map((s) => s.totalMs);
  return {
    requests: samples.length,
    failed: samples.length - ok.length,
    ttftP50: percentile(ok.map((s) => s.ttftMs), 0.5),
    ttftP95: percentile(ok.map((s) => s.ttftMs), 0.95),
    completionMean: totals.reduce((a, b) => a + b, 0) / Math.max(1, totals.length),
    completionP95: percentile(totals, 0.95),
    wallMs,
    loads,
    cacheHitRate: hitRate,
  };
}

async function runOnce(policy: Policy): Promise<Figures> {
  const fleet = await startFleet(policy);
  try {
    const { samples, wallMs } = await runWorkload(fleet.gateway.url, fleet.keys, plan());
    const stats = fleet.fakes.map((f) => f.engine.stats);
    const loads = stats.reduce((n, s) => n + s.loads, 0);
    const prompt = stats.reduce((n, s) => n + s.promptTokens, 0);
    const cached = stats.reduce((n, s) => n + s.cachedTokens, 0);
    const peak = Math.max(...stats.map((s) => s.peakHeld));
    const p95 = (kind: (turn: number) => boolean) =>
      Math.round(percentile(samples.filter((x) => x.ok && kind(x.turn ?? 0)).map((x) => x.ttftMs), 0.95));
    console.error(
      `${policy}: ${samples.length} requests in ${(wallMs / 1000).toFixed(1)} s, peak ${peak} held in a ` +
        `server; TTFT p95 of bursts ${p95((t) => t === 0)} ms, first turns ${p95((t) => t === 1)} ms, ` +
        `later turns ${p95((t) => t > 1)} ms`,
    );
    return summarize(samples, wallMs, loads, prompt ? cached / prompt : 0);
  } finally {
    await fleet.close();
  }
}

const ms = (v: number) => `${Math.round(v).toLocaleString("en-US")} ms`;
const ratio = (a: number, b: number) => `${(a / b).toFixed(2)} ×`;

type Row = [string, string, string, string, string, string];

/** A figure in ms for both policies, with the scheduled one's ratio and, when it has one, its target. */
function timeRow(label: string, w: number, s: number, atMost?: number): Row {
  const target = atMost === undefined ? "" : `≤ ${atMost} ×`;
  const result = atMost === undefined ? "" : s <= atMost * w ? "pass" : "miss";
  return [label, ms(w), ms(s), ratio(s, w), target, result];
}

function table(w: Figures, s: Figures): string {
  const percent = (rate: number) => `${(rate * 100).toFixed(1)}%`;
  const rows: Row[] = [
    timeRow("TTFT p50", w.ttftP50, s.ttftP50),
    timeRow("TTFT p95", w.ttftP95, s.ttftP95, 0.5),
    timeRow("Completion time, mean per request", w.completionMean, s.completionMean, 0.8),
    timeRow("Completion time p95", w.completionP95, s.completionP95),
    timeRow("Whole workload (wall time)", w.wallMs, s.wallMs, 0.8),
    ["Model loads", String(w.loads), String(s.loads), "", "fewer", s.loads < w.loads ? "pass" : "miss"],
    ["Prefix-cache hit rate (prompt tokens)", percent(w.cacheHitRate), percent(s.cacheHitRate), "", "", ""],
    [
      "Requests / failed",
      `${w.requests} / ${w.failed}`,
      `${s.requests} / ${s.failed}`,
      "",
      "0 failed",
      w.requests === s.requests && s.failed === 0 ? "pass" : "miss",
    ],
  ];
  const head = ["Figure", "Weighted random", "Scheduled", "Ratio", "Target", "Result"];
  const all = [head, ...rows];
  const width = head.map((_, i) => Math.max(...all.map((r) => r[i].length)));
  const line = (r: string[]) => `| ${r.map((c, i) => c.padEnd(width[i])).join(" | ")} |`;
  return [line(head), `| ${width.map((n) => "-".repeat(n)).join(" | ")} |`, ...rows.map(line)].join("\n");
}

if (import.meta.main) {
  console.error(
    `fleet: ${FLEET.servers} servers × ${FLEET.slots} slots, ${FLEET.modelMemory} models each, load ` +
      `${FLEET.loadMs} ms, ${FLEET.tokenMs} ms/token; ${WORKLOAD.clients} clients, ${WORKLOAD.bursts} bursts of ` +
      `${WORKLOAD.burstSize}`,
  );
  const weighted = await runOnce("weighted");
  const scheduled = await runOnce("scheduled");
  const text = table(weighted, scheduled);
  console.log(text);
  await Deno.mkdir(new URL("./results/", import.meta.url), { recursive: true });
  await Deno.writeTextFile(
    new URL("./results/routing.json", import.meta.url),
    JSON.stringify(
      { at: new Date().toISOString(), fleet: FLEET, workload: WORKLOAD, weighted, scheduled },
      null,
      2,
    ),
  );
}
