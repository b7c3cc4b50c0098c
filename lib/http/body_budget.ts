/**
 * @module The memory budget of the large request bodies in flight. A chat body of 20 MiB takes some six times
 * that while its request runs (the bytes read, their text, the parsed request, the copy sent to the backend,
 * and the garbage of each until it is collected), so a few parallel uploads, from one key or many, could take
 * the process's memory; counted here, a body that does not fit waits briefly for others to end, then is
 * refused with 503 and `Retry-After`. Small bodies, nearly every chat, are not counted: together they are
 * bounded by the connections, and counting them would cost every request.
 *
 * The budget is an isolate's: each worker of `deno task start:parallel` has its own.
 */
import { BodyMemoryFull } from "../errors.ts";
import { clearDeadline, type Deadline, deadline } from "../runtime/deadlines.ts";

/** Bodies from this size on are counted. */
export const COUNTED_FROM = 64 * 1024;

/**
 * What a counted body is taken to cost in memory, per byte of it: one 20 MiB body raised a gateway process's
 * peak (VmHWM) by some 6.5 bytes a byte.
 */
export const MEMORY_PER_BODY_BYTE = 6;

/** How long a body that does not fit waits for others to end before it is refused. */
export const WAIT_MS = 2_000;

/** The memory one body of `bodyBytes` is counted at. */
export function bodyMemoryFor(bodyBytes: number): number {
  return bodyBytes * MEMORY_PER_BODY_BYTE;
}

/**
 * 256 MiB: two bodies of the default largest size at once, or some twenty image requests of 2 MiB; and always
 * room for two of the largest, whatever `GATEWAY_MAX_BODY_BYTES` says.
 */
export function defaultBodyMemory(maxBodyBytes: number): number {
  return Math.max(256 * 1024 * 1024, 2 * bodyMemoryFor(maxBodyBytes));
}

interface Waiter {
  amount: number;
  resolve: () => void;
  timer: Deadline;
}

export class BodyBudget {
  #used = 0;
  /** First come, first served: a large body is not passed over for ever by smaller ones behind it. */
  readonly #waiting: Waiter[] = [];

  constructor(readonly limit: number, readonly waitMs = WAIT_MS) {}

  /** Memory counted now. */
  get used(): number {
    return this.#used;
  }

  get waiting(): number {
    return this.#waiting.length;
  }

  /**
   * Counts `amount` (at most `limit`) of memory: at once (undefined) when it fits and no one waits before it;
   * else a promise that resolves once it fits, or rejects with `BodyMemoryFull` when `waitMs` passed first.
   */
  take(amount: number): Promise<void> | undefined {
    if (this.#waiting.length === 0 && this.#used + amount <= this.limit) {
      this.#used += amount;
      return undefined;
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        amount,
        resolve,
        timer: deadline(this.waitMs, () => {
          this.#waiting.splice(this.#waiting.indexOf(waiter), 1);
          reject(new BodyMemoryFull(Math.max(1, Math.ceil(this.waitMs / 1000))));
          // The one that gave up may have kept smaller ones behind it waiting.
          this.#serve();
        }),
      };
      this.#waiting.push(waiter);
    });
  }

  /** Ends the counting of `amount` taken before. */
  give(amount: number): void {
    this.#used -= amount;
    this.#serve();
  }

  #serve(): void {
    while (this.#waiting.length && this.#used + this.#waiting[0].amount <= this.limit) {
      const next = this.#waiting.shift()!;
      clearDeadline(next.timer);
      this.#used += next.amount;
      next.resolve();
    }
  }
}
