/**
 * @module How a request is ended before its answer is done: its client left, or the stopping gateway cut it.
 * Every request has one, and on the request path its only listener is the backend call under way (or the
 * scheduler's wait before it). An `AbortController` per request cost each one an event target, and each call
 * a listener added and removed through the runtime's event code (some 2 µs a request under load, by the CPU
 * profile); this holds its listeners itself and makes a standard signal only for what needs one (the admin
 * page's live feed). A backend call's own abort (`lib/backends/call_abort.ts`) is one of these with its default reason.
 */

type Listener = (reason: unknown) => void;

function call(listener: Listener, reason: unknown): void {
  try {
    listener(reason);
  } catch (error) {
    // Logged, not rethrown: an error out of a listener would end the process as an uncaught one.
    console.error("gateway: a request's cut listener failed:", error);
  }
}

export interface Cut {
  readonly aborted: boolean;
  /** Why, once aborted: a GatewayError (`ClientClosed`, `ShuttingDown`) or the signal's reason it follows. */
  readonly reason: unknown;
  /** Calls `listener` once when the request is cut, or at once if it was; `forget` takes it back. */
  listen(listener: Listener): void;
  forget(listener: Listener): void;
  /** A standard signal that aborts with the cut, made when first asked for. */
  readonly signal: AbortSignal;
}

export class RequestCut implements Cut {
  aborted = false;
  reason: unknown;
  /** The one listener a request usually has; more are kept in `#more`. */
  #first: Listener | undefined;
  #more: Listener[] | undefined;
  #controller: AbortController | undefined;

  /** A cut already made: what every request taken once the gateway stops shares (`STOPPED`). */
  static made(reason: unknown): RequestCut {
    const cut = new RequestCut();
    cut.abort(reason);
    return cut;
  }

  /**
   * Cuts the request; later calls change nothing. Every listener is called even if one throws (its error is
   * logged): the drain cuts many requests in one go.
   */
  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const first = this.#first;
    const more = this.#more;
    this.#first = this.#more = undefined;
    if (first) call(first, reason);
    if (more) { for (const listener of more) call(listener, reason); }
    this.#controller?.abort(reason);
  }

  listen(listener: Listener): void {
    if (this.aborted) return listener(this.reason);
    if (this.#first === undefined) this.#first = listener;
    else (this.#more ??= []).push(listener);
  }

  forget(listener: Listener): void {
    if (this.#first === listener) {
      this.#first = this.#more?.shift();
      return;
    }
    const at = this.#more?.indexOf(listener) ?? -1;
    if (at >= 0) this.#more!.splice(at, 1);
  }

  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.aborted) this.#controller.abort(this.reason);
    }
    return this.#controller.signal;
  }
}

/** The cut of a request that came with only its own signal (handed to the app by another caller). */
export function signalCut(signal: AbortSignal): Cut {
  const listeners = new Map<Listener, () => void>();
  return {
    get aborted() {
      return signal.aborted;
    },
    get reason() {
      return signal.reason;
    },
    listen(listener) {
      if (signal.aborted) return listener(signal.reason);
      const call = () => {
        listeners.delete(listener);
        listener(signal.reason);
      };
      listeners.set(listener, call);
      signal.addEventListener("abort", call, { once: true });
    },
    forget(listener) {
      const call = listeners.get(listener);
      if (!call) return;
      listeners.delete(listener);
      signal.removeEventListener("abort", call);
    },
    signal,
  };
}
