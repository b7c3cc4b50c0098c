import assert from "node:assert/strict";
import { Histogram, Registry } from "prom-client";
import { HistogramTally } from "./histogram_tally.ts";

const BUCKETS = [0.01, 0.1, 1, 10];

Deno.test("a tallied histogram scrapes exactly as prom-client's own, bucket edges and +Inf included", async () => {
  const ours = new Registry();
  const theirs = new Registry();
  const tally = new HistogramTally<"format" | "stream">("h_seconds", "help text", BUCKETS);
  tally.register(ours);
  const reference = new Histogram({
    name: "h_seconds",
    help: "help text",
    labelNames: ["format", "stream"],
    buckets: BUCKETS,
    registers: [theirs],
  });
  const values = [0, 0.01, 0.010001, 0.5, 1, 9.99, 10, 11, 1e9, NaN, Infinity];
  for (const [i, value] of values.entries()) {
    const format = i % 2 ? "openai" : "ollama";
    const stream = String(i % 3 === 0);
    // Not finite: prom-client refuses it with a throw, the tally drops it; neither counts it.
    try {
      reference.observe({ format, stream }, value);
    } catch {
      // as described
    }
    tally.observe(`${format} ${stream}`, () => ({ format, stream }), value);
  }
  assert.equal(await ours.metrics(), await theirs.metrics());
  tally.reset();
  reference.reset();
  assert.equal(await ours.metrics(), await theirs.metrics());
});
