import assert from "node:assert/strict";
import { Counter, Histogram, Registry } from "prom-client";
import { Families } from "./metric_families.ts";

Deno.test("the metrics page's figures: counters summed by label, histograms merged over label sets", async () => {
  const registry = new Registry();
  const requests = new Counter({
    name: "req_total",
    help: "r",
    labelNames: ["outcome"],
    registers: [registry],
  });
  requests.inc({ outcome: "ok" }, 7);
  requests.inc({ outcome: "rejected" }, 3);
  const duration = new Histogram({
    name: "dur_seconds",
    help: "d",
    labelNames: ["format"],
    buckets: [0.1, 1, 10],
    registers: [registry],
  });
  for (const [format, s] of [["a", 0.05], ["a", 0.5], ["b", 0.5], ["b", 5]] as const) {
    duration.observe({ format }, s);
  }
  const f = new Families(await registry.getMetricsAsJSON());
  assert.equal(f.total("req_total"), 10);
  assert.deepEqual(f.by("req_total", "outcome"), [["ok", 7], ["rejected", 3]]);
  assert.equal(f.samples("dur_seconds").length, 2, "one sample per label set");
  assert.deepEqual(f.histogram("dur_seconds"), { count: 4, mean: 6.05 / 4, p50: 1, p95: 10 });
  assert.deepEqual(f.histogram("missing"), { count: 0 });
});
