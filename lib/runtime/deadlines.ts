/**
 * @module Coarse deadlines for work on the request path (body uploads, backend heads and answers). One sweep
 * serves them all instead of a timer each: a runtime timer costs every request some microseconds to arm and
 * clear, and these bounds do not need millisecond precision (one fires at most `SWEEP_MS` late).
 *
 * Clearing a deadline only drops its callback; the sweep forgets cleared entries. A set would do the same
 * work on every clear, and reallocate its table each time it empties and fills again, which is every request
 * when requests come one at a time.
 */

const SWEEP_MS = 25;

export interface Deadline {
  at: number;
  fire: (() => void) | undefined;
}

let pending: Deadline[] = [];
let sweeper: ReturnType<typeof setInterval> | undefined;

function sweep(): void {
  const now = performance.now();
  const due = pending;
  // Callbacks may set new deadlines while this runs: they go to a fresh list.
  pending = [];
  const kept: Deadline[] = [];
  for (const entry of due) {
    const fire = entry.fire;
    if (fire === undefined) continue;
    if (entry.at > now) {
      kept.push(entry);
      continue;
    }
    entry.fire = undefined;
    fire();
  }
  pending = pending.length ? kept.concat(pending) : kept;
  // Stopped only here, once a whole sweep found nothing to watch, so steady traffic never re-arms the timer.
  if (pending.length === 0) {
    clearInterval(sweeper);
    sweeper = undefined;
  }
}

/** Calls `fire` once `ms` have passed, unless `clearDeadline` came first. */
export function deadline(ms: number, fire: () => void): Deadline {
  const entry: Deadline = { at: performance.now() + ms, fire };
  pending.push(entry);
  if (sweeper === undefined) {
    sweeper = setInterval(sweep, SWEEP_MS);
    // What waits on a deadline (a socket, a body) keeps the process alive by itself, if anything should.
    Deno.unrefTimer(sweeper as unknown as number);
  }
  return entry;
}

export function clearDeadline(entry: Deadline | undefined): void {
  if (entry) entry.fire = undefined;
}
