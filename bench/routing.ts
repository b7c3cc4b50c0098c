/**
 * `deno task bench:routing`: each scenario through the gateway on fresh fleets, once with the plain weighted
 * random draw and once with the scheduler (loaded models, slots, wait queue, affinity):
 * 1. the mixed fleet (multi-turn conversations from many clients, plus bursts, on four servers holding two of
 *    three models each), with `--slots` declared and without;
 * 2. identical servers carrying one model, without `--slots` (and with, for comparison), 2 and 4 of them;
 * 3. scaling: what 1 and 4 identical servers complete in the same time;
 * 4. two tenants: a steady key's time to first token beside a bursty key's batch, against the key alone.
 * Prints one table per scenario and writes bench/results/routing.json. Time is compressed (model loads of
 * 400 ms, 4 ms per token) so it runs in a few minutes on a small machine; the ratios, not the absolute
 * figures, are the result. `--only mixed|identical|scaling|tenants` runs one scenario.
 */
import { FLEET, watchSlots } from "./routing_fleet.ts";
import { WORKLOAD } from "./routing_workload.ts";
import { failureReasons, mixed } from "./routing_mixed.ts";
import { ms, percentile, ratio, render, type Row, worstShareOff } from "./support/table_text.ts";
import {
  CLOSED_LOOP,
  IDENTICAL,
  type Policy,
  runClosedLoop,
  runScaling,
  runTenants,
  SCALING,
  startIdentical,
  TENANTS,
} from "./routing_capacity.ts";

interface IdenticalFigures {
  wallMs: number;
  ttftP95: number;
  failed: number;
  served: number[];
  /** Tokens each server generated. */
  work: number[];
  /**
   * The least wall time any policy could reach: one load, then the time the servers' slots ran requests
   * (prompts, tokens), spread over all the fleet's slots with none ever idle.
   */
  floorMs: number;
}

async function identicalOnce(
  servers: number,
  policy: Policy,
  declareSlots: boolean,
): Promise<IdenticalFigures> {
  const fleet = await startIdentical(servers, policy, declareSlots);
  try {
    const watch = watchSlots(fleet.gateway);
    const { samples, wallMs } = await runClosedLoop(fleet.gateway.url, fleet.key, servers).finally(watch);
    const ok = samples.filter((s) => s.ok);
    if (ok.length < samples.length) console.error(`  failed: ${failureReasons(samples)}`);
    const served = fleet.fakes.map((f) => f.engine.stats.requests);
    const work = fleet.fakes.map((f) => f.engine.stats.completionTokens);
    const busyMs = fleet.fakes.reduce((sum, f) => sum + f.engine.stats.busyMs, 0);
    const peak = fleet.fakes.map((f) => f.engine.stats.peakHeld);
    console.error(
      `identical ×${servers}, ${policy}${declareSlots ? ", --slots" : ""}: ${
        (wallMs / 1000).toFixed(1)
      } s, ` +
        `served ${served.join(":")}, most held in a server ${peak.join(":")}`,
    );
    return {
      wallMs,
      ttftP95: percentile(ok.map((s) => s.ttftMs), 0.95),
      failed: samples.length - ok.length,
      served,
      work,
      floorMs: IDENTICAL.loadMs + busyMs / (servers * IDENTICAL.slots),
    };
  } finally {
    await fleet.close();
  }
}

async function identical(servers: number) {
  const weighted = await identicalOnce(servers, "weighted", false);
  const learned = await identicalOnce(servers, "scheduled", false);
  const declared = await identicalOnce(servers, "scheduled", true);
  const check = (ok: boolean) => ok ? "pass" : "miss";
  const row = (label: string, w: number, l: number, d: number): Row => [
    label,
    ms(w),
    ms(l),
    ms(d),
    ratio(l, w),
    check(l <= 0.8 * w),
    ratio(l, d),
    check(l <= 1.15 * d),
  ];
  // A share is judged on the work each server did: with answers of 16 to 512 tokens, 40 requests a server
  // spread by count alone (a perfect queue over two servers misses 15 % in one run of six).
  const share = (label: string, of: (f: IdenticalFigures) => number[], judged: boolean): Row => {
    const off = worstShareOff(of(learned));
    return [
      label,
      of(weighted).join(" : "),
      of(learned).join(" : "),
      of(declared).join(" : "),
      "",
      "",
      `worst ${(off * 100).toFixed(0)}% off`,
      judged ? check(off <= 0.15) : "",
    ];
  };
  const rows: Row[] = [
    row("Whole workload (wall time)", weighted.wallMs, learned.wallMs, declared.wallMs),
    [
      "Least possible wall time (work ÷ slots)",
      ms(weighted.floorMs),
      ms(learned.floorMs),
      ms(declared.floorMs),
      ratio(learned.floorMs, weighted.wallMs),
      "",
      "",
      "",
    ],
    row("TTFT p95", weighted.ttftP95, learned.ttftP95, declared.ttftP95),
    share("Tokens generated per server", (f) => f.work, true),
    share("Requests served per server", (f) => f.served, false),
    [
      "Failed",
      String(weighted.failed),
      String(learned.failed),
      String(declared.failed),
      "",
      "",
      "",
      check(learned.failed === 0 && declared.failed === 0),
    ],
  ];
  const head = [
    "Figure",
    "Weighted random",
    "Scheduled, no --slots",
    "Scheduled, --slots 2",
    "÷ weighted",
    "≤ 0.8 ×",
    "÷ --slots",
    "≤ 1.15 ×",
  ];
  console.log(`\n### ${servers} identical servers, one model, nothing loaded\n\n${render(head, rows)}`);
  return { weighted, learned, declared };
}

async function scaling() {
  const once = async (servers: number, declareSlots: boolean) => {
    const fleet = await startIdentical(servers, "scheduled", declareSlots);
    try {
      return await runScaling(fleet.gateway.url, fleet.key);
    } finally {
      await fleet.close();
    }
  };
  const rows: Row[] = [];
  const figures: Record<string, { one: number; four: number }> = {};
  for (const declareSlots of [false, true]) {
    const one = await once(1, declareSlots);
    const four = await once(4, declareSlots);
    const times = four.completed / Math.max(1, one.completed);
    figures[declareSlots ? "declared" : "learned"] = { one: one.completed, four: four.completed };
    rows.push([
      declareSlots ? "scheduled, --slots 2" : "scheduled, no --slots",
      `${one.completed} (${one.failed} failed)`,
      `${four.completed} (${four.failed} failed)`,
      `${times.toFixed(2)} ×`,
      "≥ 3.2 ×",
      times >= 3.2 && one.failed + four.failed === 0 ? "pass" : "miss",
    ]);
  }
  const head = ["Policy", "1 server", "4 servers", "4 ÷ 1", "Target", "Result"];
  console.log(
    `\n### Scaling: requests completed in ${SCALING.seconds} s by ${SCALING.clients} clients\n\n${
      render(head, rows)
    }`,
  );
  return figures;
}

/**
 * The steady key's TTFT p95 alone and beside the bursty key, with the scheduler, on servers with `--slots 2`
 * and the model loaded (a fleet that has been serving a while).
 */
async function tenants() {
  const once = async (withBurst: boolean) => {
    const fleet = await startIdentical(TENANTS.servers, "scheduled", true, true);
    try {
      const watch = watchSlots(fleet.gateway);
      return await runTenants(fleet.gateway.url, fleet.key, fleet.other, withBurst).finally(watch);
    } finally {
      await fleet.close();
    }
  };
  const alone = await once(false);
  const beside = await once(true);
  const p95 = (v: number[]) => percentile(v, 0.95);
  const rows: Row[] = [
    [
      "Steady key's TTFT p95",
      ms(p95(alone.steadyTtft)),
      ms(p95(beside.steadyTtft)),
      ratio(p95(beside.steadyTtft), p95(alone.steadyTtft)),
      "≤ 1.5 ×",
      p95(beside.steadyTtft) <= 1.5 * p95(alone.steadyTtft) ? "pass" : "miss",
    ],
    [
      "Steady key's TTFT p50",
      ms(percentile(alone.steadyTtft, 0.5)),
      ms(percentile(beside.steadyTtft, 0.5)),
      ratio(percentile(beside.steadyTtft, 0.5), percentile(alone.steadyTtft, 0.5)),
      "",
      "",
    ],
    [
      "Failed",
      String(alone.failed),
      String(beside.failed),
      "",
      "0",
      alone.failed + beside.failed ? "miss" : "pass",
    ],
  ];
  const head = ["Figure", "Steady key alone", "Beside the bursty key", "Ratio", "Target", "Result"];
  console.log(
    `\n### Two tenants on ${TENANTS.servers} servers (--slots 2): ${TENANTS.steadyClients} steady clients; ` +
      `${TENANTS.bursts} bursts of ${TENANTS.burstSize} from another key\n\n${render(head, rows)}`,
  );
  return { alone, beside };
}

if (import.meta.main) {
  const only = Deno.args[Deno.args.indexOf("--only") + 1];
  const runs = (name: string) => !Deno.args.includes("--only") || only === name;
  const results: Record<string, unknown> = { at: new Date().toISOString() };
  if (runs("mixed")) {
    console.error(
      `mixed fleet: ${FLEET.servers} servers × ${FLEET.slots} slots, ${FLEET.modelMemory} models each, load ` +
        `${FLEET.loadMs} ms, ${FLEET.tokenMs} ms/token; ${WORKLOAD.clients} clients, ${WORKLOAD.bursts} bursts ` +
        `of ${WORKLOAD.burstSize}`,
    );
    results.mixed = {
      fleet: FLEET,
      workload: WORKLOAD,
      declared: await mixed(true),
      learned: await mixed(false),
    };
  }
  if (runs("identical")) {
    console.error(
      `identical servers: ${IDENTICAL.slots} slots each (FIFO inside), one model, load ${IDENTICAL.loadMs} ms, ` +
        `${IDENTICAL.tokenMs} ms/token; ${CLOSED_LOOP.clientsPerServer} clients per server, ` +
        `${CLOSED_LOOP.requestsPerClient} requests each, answers of ${
          CLOSED_LOOP.answerTokens.join("–")
        } tokens`,
    );
    results.identical = {
      fleet: IDENTICAL,
      workload: CLOSED_LOOP,
      two: await identical(2),
      four: await identical(4),
    };
  }
  if (runs("scaling")) results.scaling = { workload: SCALING, ...await scaling() };
  if (runs("tenants")) results.tenants = { workload: TENANTS, ...await tenants() };
  await Deno.mkdir(new URL("./results/", import.meta.url), { recursive: true });
  await Deno.writeTextFile(
    new URL("./results/routing.json", import.meta.url),
    JSON.stringify(results, null, 2),
  );
}
