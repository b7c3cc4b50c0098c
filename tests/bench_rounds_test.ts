import assert from "node:assert/strict";
import { merged, type RoundRun } from "../bench/support/rounds.ts";

const slice = (requests: number, seconds: number, cpuUs: number, p50Us: number): RoundRun => ({
  requests,
  requestsPerSec: requests / seconds,
  errors: 0,
  p50Us,
  p99Us: 2 * p50Us,
  cpuUsPerRequest: cpuUs,
  mainUsPerRequest: cpuUs / 2,
});

Deno.test("a run merged from its slices keeps its rate over the whole time and its CPU per request", () => {
  // 600 requests in 4 s: 150 a second, not the mean of the slices' rates (100, 300 and 100).
  const run = merged([slice(100, 1, 40, 500), slice(300, 1, 20, 300), slice(200, 2, 30, 400)]);
  assert.equal(run.requests, 600);
  assert.equal(run.requestsPerSec, 150);
  assert.equal(run.cpuUsPerRequest, (100 * 40 + 300 * 20 + 200 * 30) / 600);
  assert.equal(run.mainUsPerRequest, run.cpuUsPerRequest / 2);
  assert.equal(run.p50Us, 400);
  assert.equal(run.p99Us, 800);
});
