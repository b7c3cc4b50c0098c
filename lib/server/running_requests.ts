/**
 * @module The drain's record of running requests: each one's cut and the lazy watch for its client
 * leaving, kept in a list that allocates nothing as requests come and go.
 */
import { ClientClosed } from "../errors.ts";
import { RequestCut } from "../runtime/request_cut.ts";

/** How long a request runs before the drain listens for its client leaving (see `Drain.#watchSoon`). */
export const WATCH_AFTER_MS = 50;

/** One request being handled: its cut, and whether its client's leaving is listened for yet. */
export class Running {
  readonly abort = new RequestCut();
  readonly since = performance.now();
  /** Its answer is a feed (see `Drain.#feeds`). */
  feed = false;
  /** Neighbours in the drain's list. */
  prev: Running | undefined;
  next: Running | undefined;
  #watching = false;

  constructor(private readonly request: Request) {}

  readonly #clientLeft = () => this.abort.abort(new ClientClosed());

  watch(): void {
    if (this.#watching) return;
    this.#watching = true;
    const signal = this.request.signal;
    if (signal.aborted) this.#clientLeft();
    else signal.addEventListener("abort", this.#clientLeft, { once: true });
  }

  unwatch(): void {
    if (this.#watching) this.request.signal.removeEventListener("abort", this.#clientLeft);
  }
}

/**
 * The running requests, linked through themselves: adding and removing one allocates nothing, where a set
 * reallocates its table as it grows and shrinks with the traffic.
 */
export class RunningList {
  #head: Running | undefined;

  get empty(): boolean {
    return this.#head === undefined;
  }

  add(running: Running): void {
    running.next = this.#head;
    if (this.#head) this.#head.prev = running;
    this.#head = running;
  }

  delete(running: Running): void {
    if (running.prev) running.prev.next = running.next;
    else if (this.#head === running) this.#head = running.next;
    else return;
    if (running.next) running.next.prev = running.prev;
    running.prev = running.next = undefined;
  }

  *[Symbol.iterator](): Generator<Running> {
    // The next one is taken before handing this one out, which the caller may remove.
    for (let r = this.#head, next = r?.next; r; r = next, next = r?.next) yield r;
  }
}
