/**
 * @module One connection accepted by the gateway's listener (`lib/server/listener.ts`): its peer's address and
 * memo of checked secrets (its part of each request's `Client`), the requests it has under way, since when it
 * has been idle, and its close after a refusal.
 */
import { SecretMemo } from "../auth/secret_memo.ts";

/**
 * How long a connection refused mid-upload stays open after its answer went out. Closed at once, the bytes
 * the client is still sending arrive at a closed socket, the kernel answers them with a reset, and a reset
 * throws away the answer waiting in the client's receive buffer: the client sees a broken connection instead
 * of its 413. Given a moment, the client reads the answer and closes first.
 */
const LINGER_MS = 2_000;

/** One accepted connection, as the listener's sweep and accept loop see it. */
export class Connection {
  /** Requests received and not yet delivered. */
  active = 0;
  /** Since when the connection has had no request in progress. */
  idleSince = performance.now();
  served = false;
  readonly abort = new AbortController();
  readonly secrets = new SecretMemo();
  #linger?: ReturnType<typeof setTimeout>;

  /**
   * `address`: the peer's. `proxy`: from a trusted proxy, which keeps connections idle for its many clients.
   */
  constructor(readonly address: string, readonly proxy = false) {}

  /** Closes the connection once its client has had time to read a refusal (see LINGER_MS). */
  closeAfterLinger(): void {
    if (this.#linger !== undefined || this.abort.signal.aborted) return;
    const linger = setTimeout(() => this.abort.abort(), LINGER_MS);
    Deno.unrefTimer(linger);
    this.#linger = linger;
  }

  /** The connection ended on its own (its client closed it). */
  ended(): void {
    clearTimeout(this.#linger);
  }
}
