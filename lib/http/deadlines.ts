/**
 * @module Coarse deadlines for work on the request path (body uploads, backend heads and answers). One sweep
 * serves them all instead of a timer each: a runtime timer costs every request some microseconds to arm and
 * clear, and these bounds do not need millisecond precision (one fires at most `SWEEP_MS` late).
 */

const SWEEP_MS = 25;

export interface Deadline {
  at: number;
  fire: () => void;
}

const pending = new Set<Deadline>();
let sweeper: ReturnType<typeof setInterval> | undefined;

function sweep(): void {
  const now = performance.now();
  for (const deadline of pending) {
    if (deadline.at <= now) {
      pending.delete(deadline);
      deadline.fire();
    }
  }
  if (pending.size === 0) {
    clearInterval(sweeper);
    sweeper = undefined;
  }
}

/** Calls `fire` once `ms` have passed, unless `clearDeadline` came first. */
export function deadline(ms: number, fire: () => void): Deadline {
  const entry = { at: performance.now() + ms, fire };
  pending.add(entry);
  if (sweeper === undefined) {
    sweeper = setInterval(sweep, SWEEP_MS);
    // What waits on a deadline (a socket, a body) keeps the process alive by itself, if anything should.
    Deno.unrefTimer(sweeper as unknown as number);
  }
  return entry;
}

export function clearDeadline(entry: Deadline | undefined): void {
  if (!entry || !pending.delete(entry) || pending.size) return;
  // Nothing left to watch: no timer outlives the work it bounds.
  clearInterval(sweeper);
  sweeper = undefined;
}
