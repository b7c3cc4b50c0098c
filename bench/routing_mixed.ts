/**
 * The routing bench's mixed fleet: its workload through a fresh fleet with one policy, summed up as figures,
 * and the table comparing the weighted random draw with the scheduler, with `--slots` declared or not.
 */
import { startFleet, watchSlots } from "./routing_fleet.ts";
import { plan, runWorkload, type Sample } from "./routing_workload.ts";
import type { Policy } from "./routing_capacity.ts";
import { percentile, render, type Row, timeRow } from "./support/table_text.ts";

export interface Figures {
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

/** Failures by reason, e.g. `2 × 503 queue_timeout`, so a failed run says why. */
export function failureReasons(samples: Sample[]): string {
  const counts = new Map<string, number>();
  for (const s of samples) if (!s.ok) counts.set(s.failure ?? "?", (counts.get(s.failure ?? "?") ?? 0) + 1);
  return [...counts].map(([why, n]) => `${n} × ${why}`).join(", ");
}

function summarize(samples: Sample[], wallMs: number, loads: number, hitRate: number): Figures {
  const ok = samples.filter((s) => s.ok);
  if (ok.length < samples.length) console.error(`  failed: ${failureReasons(samples)}`);
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

async function runOnce(policy: Policy, declareSlots = true): Promise<Figures> {
  const fleet = await startFleet(policy, declareSlots);
  try {
    const watch = watchSlots(fleet.gateway);
    const { samples, wallMs } = await runWorkload(fleet.gateway.url, fleet.keys, plan()).finally(watch);
    const stats = fleet.fakes.map((f) => f.engine.stats);
    const loads = stats.reduce((n, s) => n + s.loads, 0);
    const prompt = stats.reduce((n, s) => n + s.promptTokens, 0);
    const cached = stats.reduce((n, s) => n + s.cachedTokens, 0);
    const peak = Math.max(...stats.map((s) => s.peakHeld));
    const p95 = (kind: (turn: number) => boolean) =>
      Math.round(percentile(samples.filter((x) => x.ok && kind(x.turn ?? 0)).map((x) => x.ttftMs), 0.95));
    console.error(
      `${policy}${declareSlots ? "" : " (no --slots)"}: ${samples.length} requests in ${
        (wallMs / 1000).toFixed(1)
      } s, peak ${peak} held in a ` +
        `server; TTFT p95 of bursts ${p95((t) => t === 0)} ms, first turns ${p95((t) => t === 1)} ms, ` +
        `later turns ${p95((t) => t > 1)} ms`,
    );
    return summarize(samples, wallMs, loads, prompt ? cached / prompt : 0);
  } finally {
    await fleet.close();
  }
}

function mixedTable(w: Figures, s: Figures): string {
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
  return render(["Figure", "Weighted random", "Scheduled", "Ratio", "Target", "Result"], rows);
}

/** The mixed fleet's table, with `--slots` declared and without. */
export async function mixed(declareSlots: boolean) {
  const weighted = await runOnce("weighted", declareSlots);
  const scheduled = await runOnce("scheduled", declareSlots);
  const title = declareSlots ? "Mixed fleet, --slots declared" : "Mixed fleet, no --slots";
  console.log(`\n### ${title}\n\n${mixedTable(weighted, scheduled)}`);
  return { weighted, scheduled };
}
