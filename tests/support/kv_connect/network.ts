/**
 * @module The network between clients and the store, as the tests shape it: a round-trip latency, half on the
 * way to the store and half on the way back, and an outage, during which connections are refused. A request
 * still on its way when an outage begins never reaches the store (its client gets a 503 and, like Deno's
 * client, tries again); one the store already carried out still gets its answer.
 */
export class Network {
  #latencyMs: number;
  #down = false;
  readonly #waiting = new Set<() => void>();

  constructor(latencyMs = 0) {
    this.#latencyMs = latencyMs;
  }

  get down(): boolean {
    return this.#down;
  }

  set latencyMs(ms: number) {
    if (!(ms >= 0)) throw new RangeError(`latency must be a non-negative number of ms, not ${ms}`);
    this.#latencyMs = ms;
  }

  /** The way to the store; false if an outage began meanwhile, so the request must not reach it. */
  toStore(): Promise<boolean> {
    if (this.#down) return Promise.resolve(false);
    const ms = this.#latencyMs / 2;
    if (ms <= 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const settle = (arrived: boolean) => {
        clearTimeout(timer);
        this.#waiting.delete(cut);
        resolve(arrived);
      };
      const cut = () => settle(false);
      const timer = setTimeout(() => settle(true), timerFor(ms));
      this.#waiting.add(cut);
    });
  }

  /** The way back, for an answer or a watch message. */
  fromStore(): Promise<void> {
    const ms = this.#latencyMs / 2;
    return ms <= 0 ? Promise.resolve() : new Promise((resolve) => setTimeout(resolve, timerFor(ms)));
  }

  fail(): void {
    this.#down = true;
    for (const cut of this.#waiting) cut();
  }

  heal(): void {
    this.#down = false;
  }
}

/**
 * Deno's timers count whole milliseconds (a fraction is dropped) and fire about 1.15 ms after the time asked
 * for, a zero included. Each half of the trip asks for what lands nearest its length, so a round trip lasts the
 * latency within about a millisecond instead of 2.3 ms more. A half-trip under about 2 ms takes about 2 ms.
 */
const TIMER_LATE_MS = 1.15;

function timerFor(ms: number): number {
  return Math.max(0, Math.round(ms - TIMER_LATE_MS));
}
