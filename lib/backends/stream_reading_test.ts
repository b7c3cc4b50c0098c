import assert from "node:assert/strict";
import { BackendFailure } from "../errors.ts";
import { withIdleTimeout } from "./stream_reading.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Yields `count` numbers, each after `gapMs`; then stalls until `release` is called, if `stallAtEnd`. */
function paced(count: number, gapMs: number, stallAtEnd = false) {
  let release = () => {};
  const stalled = new Promise<void>((r) => release = r);
  async function* gen() {
    for (let i = 0; i < count; i++) {
      await sleep(gapMs);
      yield i;
    }
    if (stallAtEnd) await stalled;
  }
  return { source: gen(), release: () => release() };
}

Deno.test("a stream whose chunks keep coming never times out, however long it runs in total", async () => {
  const { source } = paced(8, 40);
  let timeouts = 0;
  const got: number[] = [];
  for await (const n of withIdleTimeout(source, 120, () => timeouts++)) got.push(n);
  assert.deepEqual(got, [0, 1, 2, 3, 4, 5, 6, 7]);
  assert.equal(timeouts, 0);
});

Deno.test("time the consumer holds a chunk is not counted as the backend's silence", async () => {
  const { source } = paced(3, 10);
  let timeouts = 0;
  const got: number[] = [];
  for await (const n of withIdleTimeout(source, 100, () => timeouts++)) {
    got.push(n);
    await sleep(250);
  }
  assert.deepEqual(got, [0, 1, 2]);
  assert.equal(timeouts, 0);
});

Deno.test("a stall fails with a 504 BackendFailure after the idle time, not before, and stops the source", async () => {
  const { source, release } = paced(2, 10, true);
  let timeouts = 0;
  const got: number[] = [];
  let waitStart = 0;
  try {
    await assert.rejects(
      (async () => {
        for await (const n of withIdleTimeout(source, 150, () => (timeouts++, release()))) {
          got.push(n);
          waitStart = performance.now();
        }
      })(),
      (error) => error instanceof BackendFailure && error.status === 504 && /150 ms/.test(error.message),
    );
    assert.ok(performance.now() - waitStart >= 145, "failed before the idle time was up");
    assert.deepEqual(got, [0, 1]);
    assert.equal(timeouts, 1);
  } finally {
    release();
  }
});
