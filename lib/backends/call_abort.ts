/**
 * @module How one backend call is stopped: by the client leaving, a deadline, a body too large, or the end of a
 * stream. An `AbortController` would cost every call an event target, its signal and a listener registered
 * through the runtime's option parsing; a call has one party to tell (the HTTP client's handler), so this
 * holds that one callback, and makes a standard signal only for the rare wait that needs one.
 */
export class CallAbort {
  aborted = false;
  reason: unknown;
  #onAbort?: (reason: unknown) => void;
  #controller?: AbortController;

  /** Stops the call; later calls change nothing. */
  abort(reason: unknown = new DOMException("The call was aborted", "AbortError")): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.#onAbort?.(reason);
    this.#controller?.abort(reason);
  }

  /** The one party told of the abort (the call's handler); called at once if it came already. */
  onAbort(listener: (reason: unknown) => void): void {
    this.#onAbort = listener;
    if (this.aborted) listener(this.reason);
  }

  /** A standard signal following this one, made when first asked for. */
  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.aborted) this.#controller.abort(this.reason);
    }
    return this.#controller.signal;
  }
}
