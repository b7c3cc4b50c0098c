/**
 * @module How one backend call is stopped: by the client leaving, a deadline, a body too large, or the end of a
 * stream. A request's cut (`lib/runtime/request_cut.ts`) with the call's own default reason: it holds the call's
 * one listener (the HTTP client's handler) itself and makes a standard signal only for the rare wait that needs
 * one, where an `AbortController` would cost every call an event target and a listener registered through the
 * runtime's option parsing.
 */
import { RequestCut } from "../runtime/request_cut.ts";

export class CallAbort extends RequestCut {
  /** Stops the call; later calls change nothing. */
  override abort(reason: unknown = new DOMException("The call was aborted", "AbortError")): void {
    super.abort(reason);
  }

  /** The party told of the abort (the call's handler); called at once if it came already. */
  onAbort(listener: (reason: unknown) => void): void {
    this.listen(listener);
  }
}
