/**
 * @module A bounded wait between a backend's reads: a read that brings nothing for `idleMs` fails with a 504
 * BackendFailure, and `onTimeout` stops the source. Only the waits count: while the consumer holds a chunk (a
 * slow client) the backend is not idle. One timer serves the whole stream and is re-armed for what is left of
 * the current wait when it fires early, because a timer per chunk cost a fifth of the gateway's work per
 * streamed chunk.
 */
import { BackendFailure } from "../errors.ts";

export class IdleReads<T> {
  #waitingSince: number | undefined;
  #fail: ((error: unknown) => void) | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly source: { next(): Promise<IteratorResult<T, unknown>> },
    private readonly idleMs: number,
    private readonly onTimeout: () => void,
  ) {}

  /** The source's next read; rejects once it has brought nothing for the idle time. */
  next(): Promise<IteratorResult<T, unknown>> {
    this.#waitingSince = performance.now();
    this.#timer ??= setTimeout(this.#check, this.idleMs);
    // The timer rejects the wait itself: a source stopped by `onTimeout` need not settle its read.
    return new Promise((resolve, reject) => {
      this.#fail = reject;
      this.source.next().then((read) => {
        this.#waitingSince = undefined;
        resolve(read);
      }, reject);
    });
  }

  /** No more reads: the timer is let go now, not when it fires. */
  close(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#waitingSince = undefined;
  }

  #check = () => {
    this.#timer = undefined;
    if (this.#waitingSince === undefined) return;
    const idle = performance.now() - this.#waitingSince;
    if (idle < this.idleMs) {
      this.#timer = setTimeout(this.#check, this.idleMs - idle);
      return;
    }
    this.onTimeout();
    this.#fail?.(new BackendFailure(`model server sent nothing for ${this.idleMs} ms`, true, true, 504));
  };
}
