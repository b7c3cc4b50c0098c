/**
 * @module A server's recent load, in bounded memory: requests and errors per second over the last minute, and
 * the latest latency samples. Recording is on every request's path, so it allocates nothing; the summing and
 * sorting wait until the admin page or metrics ask.
 */

const SECONDS = 60;

/** Requests and errors per second over the last minute, in fixed arrays: no allocation per request. */
export class MinuteCounts {
  readonly #second = new Float64Array(SECONDS).fill(-1);
  readonly #requests = new Uint32Array(SECONDS);
  readonly #errors = new Uint32Array(SECONDS);

  add(now: number, error: boolean): void {
    const second = Math.floor(now / 1000);
    const i = second % SECONDS;
    if (this.#second[i] !== second) {
      this.#second[i] = second;
      this.#requests[i] = 0;
      this.#errors[i] = 0;
    }
    this.#requests[i]++;
    if (error) this.#errors[i]++;
  }

  sum(now: number): { requests: number; errors: number } {
    const oldest = Math.floor(now / 1000) - SECONDS;
    let requests = 0, errors = 0;
    for (let i = 0; i < SECONDS; i++) {
      if (this.#second[i] <= oldest) continue;
      requests += this.#requests[i];
      errors += this.#errors[i];
    }
    return { requests, errors };
  }
}

/** A ring of the latest latency samples; sorting waits until someone reads the percentiles. */
export class LatencyRing {
  readonly #ms: Float64Array;
  readonly #at: Float64Array;
  #next = 0;
  #size = 0;

  constructor(capacity: number, readonly maxAgeMs: number) {
    this.#ms = new Float64Array(capacity);
    this.#at = new Float64Array(capacity);
  }

  add(now: number, ms: number): void {
    this.#ms[this.#next] = ms;
    this.#at[this.#next] = now;
    this.#next = (this.#next + 1) % this.#ms.length;
    if (this.#size < this.#ms.length) this.#size++;
  }

  percentiles(now: number): { n: number; p50?: number; p95?: number } {
    const recent: number[] = [];
    for (let i = 0; i < this.#size; i++) if (now - this.#at[i] <= this.maxAgeMs) recent.push(this.#ms[i]);
    if (!recent.length) return { n: 0 };
    recent.sort((a, b) => a - b);
    const rank = (p: number) => recent[Math.ceil(p * recent.length) - 1];
    return { n: recent.length, p50: rank(0.5), p95: rank(0.95) };
  }
}
