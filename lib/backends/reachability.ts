/**
 * @module The connect timeout. The backend client's own is off (`upstream.ts`): a server whose host
 * vanished (packets dropped, not refused) would hold a request for the whole first-byte timeout, which is long
 * because models load slowly. So before calling a server that has not answered recently, one TCP connection is
 * opened to it with the connect timeout; a server that answered within the last few seconds is taken as
 * reachable, which keeps the check off the hot path of a busy server.
 */
import { BackendFailure } from "../errors.ts";

/** How long a server counts as reachable after it last answered. */
const FRESH_MS = 5_000;

interface Origin {
  hostname: string;
  port: number;
  /** performance.now() of the last answer or passed check. */
  okAt: number;
}

type Connect = (options: Deno.ConnectOptions) => Promise<{ close(): void }>;

export class Reachability {
  readonly #origins = new Map<string, Origin>();

  /** `connect` is replaceable because a host that drops packets cannot be staged on loopback. */
  constructor(private readonly connect: Connect = Deno.connect) {}

  #origin(url: string): Origin {
    let origin = this.#origins.get(url);
    if (!origin) {
      const parsed = new URL(url);
      const port = Number(parsed.port) || (parsed.protocol === "https:" ? 443 : 80);
      origin = { hostname: parsed.hostname.replace(/^\[|\]$/g, ""), port, okAt: -Infinity };
      if (this.#origins.size > 10_000) this.#origins.clear();
      this.#origins.set(url, origin);
    }
    return origin;
  }

  /**
   * Resolves when the server at `url` accepts a connection within `timeoutMs`; undefined when it answered
   * recently, so a busy server's requests do not wait a turn for nothing.
   */
  check(url: string, timeoutMs: number, stop?: { readonly signal: AbortSignal }): Promise<void> | undefined {
    const origin = this.#origin(url);
    if (performance.now() - origin.okAt < FRESH_MS) return undefined;
    // The caller's signal is asked for only now: a server that answered recently needs none.
    return this.#connect(origin, timeoutMs, stop?.signal);
  }

  async #connect(origin: Origin, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    const timeout = AbortSignal.timeout(timeoutMs);
    try {
      const conn = await this.connect({
        hostname: origin.hostname,
        port: origin.port,
        signal: signal ? AbortSignal.any([timeout, signal]) : timeout,
      });
      conn.close();
    } catch (error) {
      if (signal?.aborted) throw error;
      throw timeout.aborted
        ? new BackendFailure(`could not connect to the model server within ${timeoutMs} ms`, true, true, 504)
        : new BackendFailure("could not reach the model server", true, true);
    }
    origin.okAt = performance.now();
  }

  /** The server answered: no check is needed for a while. */
  answered(url: string): void {
    this.#origin(url).okAt = performance.now();
  }
}
