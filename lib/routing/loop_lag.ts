/**
 * @module How long the gateway's own event loop was held up (a collection, a machine too busy to run it)
 * within a span of time. What the learned slots see of a server is the time from sending to the first byte;
 * a pause of the gateway's own inside that time looks like a wait behind another request at the server, and
 * under a loaded machine it turned a server with room into one "found queueing", its figure lowered and held.
 * The pauses are taken out of that time first.
 *
 * A timer ticks every `periodMs`; a tick that comes late by L shows the loop was held for the L before it.
 * The last ticks are kept in a ring, and a span's pause is the part of those held times inside it.
 */

const TICKS = 256;

export class LoopLag {
  readonly #at = new Float64Array(TICKS);
  readonly #late = new Float64Array(TICKS);
  #next = 0;
  #expected: number;
  readonly #timer: ReturnType<typeof setInterval>;

  constructor(readonly now: () => number = Date.now, readonly periodMs = 20) {
    this.#expected = now() + periodMs;
    this.#timer = setInterval(() => this.#tick(), periodMs);
    Deno.unrefTimer(this.#timer);
  }

  #tick(): void {
    const at = this.now();
    this.#at[this.#next] = at;
    this.#late[this.#next] = Math.max(0, at - this.#expected);
    this.#next = (this.#next + 1) % TICKS;
    this.#expected = at + this.periodMs;
  }

  /** Time the loop was held up between `from` and `to` (as far back as the ring reaches), ms. */
  pausedBetween(from: number, to: number): number {
    let paused = 0;
    for (let i = 0; i < TICKS; i++) {
      const late = this.#late[i];
      if (late === 0) continue;
      const end = this.#at[i];
      const overlap = Math.min(end, to) - Math.max(end - late, from);
      if (overlap > 0) paused += overlap;
    }
    return paused;
  }

  stop(): void {
    clearInterval(this.#timer);
  }
}
