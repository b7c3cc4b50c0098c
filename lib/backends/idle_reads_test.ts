import assert from "node:assert/strict";
import { BackendFailure } from "../errors.ts";
import { IdleReads } from "./idle_reads.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Every read of `source` through an idle bound, as the stream reader makes them. */
async function* withIdleTimeout<T>(source: AsyncIterator<T>, idleMs: number, onTimeout: () => void) {
  const reads = new IdleReads(source, idleMs, onTimeout);
  try {
    for (;;) {
      const read = await reads.next();
      if (read.done) return;
      yield read.value;
    }
  } finally {
    reads.close();
  }
}

/**
 * A source that yields as soon as it is asked, until `more()` says no; then, with `stall`, it waits until
 * `release()`. Its gaps are a turn of the event loop, far inside any idle time, however loaded the machine.
 */
function eager(more: (yielded: number) => boolean, stall = false) {
  const stalled = Promise.withResolvers<void>();
  let yielded = 0;
  async function* gen() {
    while (more(yielded)) {
      await new Promise((r) => setTimeout(r, 0));
      yield yielded++;
    }
    if (stall) await stalled.promise;
  }
  return { source: gen(), release: () => stalled.resolve() };
}

Deno.test("a stream whose chunks keep coming never times out, however long it runs in total", async () => {
  const idleMs = 200;
  const started = performance.now();
  // Runs for three idle times in all, with no gap near one.
  const { source } = eager(() => performance.now() - started < 3 * idleMs);
  let timeouts = 0;
  const got: number[] = [];
  for await (const n of withIdleTimeout(source, idleMs, () => timeouts++)) got.push(n);
  assert.deepEqual(got, got.map((_, i) => i), "every chunk, in order");
  assert.equal(timeouts, 0);
});

Deno.test("time the consumer holds a chunk is not counted as the backend's silence", async () => {
  const idleMs = 100;
  const { source } = eager((n) => n < 3);
  let timeouts = 0;
  const got: number[] = [];
  for await (const n of withIdleTimeout(source, idleMs, () => timeouts++)) {
    got.push(n);
    // Each chunk held for more than the idle time, while the source has the next one ready.
    await sleep(2 * idleMs);
  }
  assert.deepEqual(got, [0, 1, 2]);
  assert.equal(timeouts, 0);
});

Deno.test("a stall fails with a 504 BackendFailure after the idle time, not before, and stops the source", async () => {
  const idleMs = 150;
  const { source, release } = eager((n) => n < 2, true);
  let timeouts = 0;
  const got: number[] = [];
  let waitStart = 0;
  try {
    await assert.rejects(
      (async () => {
        for await (const n of withIdleTimeout(source, idleMs, () => (timeouts++, release()))) {
          got.push(n);
          waitStart = performance.now();
        }
      })(),
      (error) => error instanceof BackendFailure && error.status === 504 && /150 ms/.test(error.message),
    );
    // A lower bound only: on a loaded machine the timeout comes later, never sooner.
    assert.ok(performance.now() - waitStart >= idleMs - 5, "failed before the idle time was up");
    assert.deepEqual(got, [0, 1]);
    assert.equal(timeouts, 1);
  } finally {
    release();
  }
});
