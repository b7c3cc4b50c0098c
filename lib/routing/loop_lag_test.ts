import assert from "node:assert/strict";
import { LoopLag } from "./loop_lag.ts";

/** Holds the event loop for `ms`, as a long collection or a starved process would. */
function block(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) { /* held */ }
}

const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

Deno.test("loop lag: a pause of the loop inside a span is found, one outside it is not", async () => {
  const lag = new LoopLag(() => performance.now(), 10);
  try {
    await tick(50);
    const before = performance.now();
    await tick(30);
    const from = performance.now();
    block(200);
    await tick(30);
    const to = performance.now();
    const inside = lag.pausedBetween(from, to);
    // At least the pause (less a tick's rounding), never more than the span: a busy machine may add its own.
    assert.ok(
      inside >= 180 && inside <= to - from,
      `found ${inside} ms of a 200 ms pause in ${to - from} ms`,
    );
    assert.ok(lag.pausedBetween(before, from - 1) < 180, "the pause is not found before it began");
    const half = lag.pausedBetween(from + 100, to);
    assert.ok(half >= 80 && half <= to - from - 100, `the second half of the pause: ${half} ms`);
  } finally {
    lag.stop();
  }
});
