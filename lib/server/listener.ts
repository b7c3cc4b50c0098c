/**
 * @module The gateway's own listener under the runtime's HTTP engine. `Deno.serve` accepts connections in a
 * loop the program cannot reach: one accept error (out of file descriptors) ends that loop and, through an
 * uncaught rejection, the process; and it bounds neither how long a request head may take nor how long an
 * idle keep-alive connection stays. Here the program accepts each connection itself, so it can
 *  - keep the number of open connections under a limit that leaves descriptors for backends and the store
 *    (at the limit, new connections wait in the kernel's backlog until one closes);
 *  - survive an accept error: say so once, wait, and try again, serving the connections it has meanwhile;
 *  - close a connection whose request head does not arrive in time, and one idle for too long between
 *    requests.
 * Each accepted connection is still served by the runtime's HTTP engine (the same hyper-based code that
 * `Deno.serve` uses), reached through `serveHttpOnConnection` on `Deno[Deno.internal]`: Deno 2 has no public
 * API that serves HTTP on an accepted connection. Where that entry is missing (another runtime version), the
 * gateway falls back to `Deno.serve` and says that these bounds are off.
 */

export interface ConnectionLimits {
  /** Time from accepting a connection to its first complete request head. */
  headTimeoutMs: number;
  /**
   * Time a trusted proxy's connection (`exempt`) may stay open with no request in progress, after its first.
   * Any other client's next request head must arrive within `headTimeoutMs` of its previous answer (or this,
   * if shorter): the engine reads a head out of the program's sight, so a head trickled in on a kept-alive
   * connection is bounded only by how long that connection may stay idle.
   */
  keepAliveTimeoutMs: number;
  /** Open connections at most; more wait to be accepted. */
  maxConnections: number;
  /**
   * Open connections at most from one address (0: no such limit); more are closed at once, so that one
   * client's idle connections cannot take every place. Addresses `exempt` says (trusted proxies) have none.
   */
  maxPerAddress?: number;
  exempt?: (address: string) => boolean;
}

/**
 * What the listener calls with each request: `from` is its connection's part of the `Client` (the peer's
 * address, and the connection's memo of secrets, which lives as long as the connection does); `delivered`
 * settles once the answer has been sent or the client has gone.
 */
export type RequestHandler = (
  request: Request,
  from: Pick<Client, "address" | "secrets">,
  delivered: Promise<void>,
) => Response | Promise<Response>;

export interface Listening {
  addr: Deno.NetAddr;
  /** Undefined where the runtime's own listener serves (and keeps no such figures). */
  stats?: () => ConnectionStats;
  /** Stops accepting; open connections are left to finish (the caller's drain bounds them). */
  close(): void;
  /**
   * Ends every connection with no request running. Once the drain is done, a client that sends another
   * request on its kept-alive connection would be answered while the last records are being written, and
   * that request's record could be lost; ended, the connection sends it elsewhere.
   */
  closeIdle?(): void;
}

import { ClientStalled } from "../errors.ts";
import type { Client } from "../http/client.ts";
import type { ConnectionStats } from "../http/connection_stats.ts";
import { Connection } from "./connection.ts";
import { type ServeOnConnection, serveOnConnection } from "./serve_on_connection.ts";

/**
 * Connections taken at most when the configuration does not say: the runtime cannot read its descriptor
 * limit without full permissions, so the limit is learned instead, the first time descriptors run out.
 */
export const DEFAULT_MAX_CONNECTIONS = 4_096;
/** Descriptors kept free once the limit is learned: backend connections, the store, probes. */
const RESERVE = 32;
const OUT_OF_DESCRIPTORS = /os error 2[34]\b|too many open files/i;

/** Checks for idle and slow connections this often, at most: one sweep serves them all, not a timer each. */
const SWEEP_MS = 1_000;
/** Waits between attempts while accepting fails. */
const RETRY_MS = [50, 100, 250, 500, 1_000];

export interface ListenOptions {
  hostname: string;
  port: number;
  /** SO_REUSEPORT: several workers listen on one port and the kernel spreads connections among them. */
  reusePort?: boolean;
  limits: ConnectionLimits;
  log?: (line: string) => void;
}

export function listen(options: ListenOptions, handler: RequestHandler): Listening {
  const serve = serveOnConnection();
  const log = options.log ?? ((line: string) => console.error(line));
  return serve ? ownListener(serve, options, log, handler) : runtimeListener(options, log, handler);
}

/** The runtime's listener, where the gateway cannot have its own: no bounds, but no crash on accept errors. */
function runtimeListener(
  options: ListenOptions,
  log: (line: string) => void,
  handler: RequestHandler,
): Listening {
  log("gateway: this runtime accepts connections itself; head, idle and connection limits are off");
  const server = Deno.serve(
    { port: options.port, hostname: options.hostname, reusePort: options.reusePort, onListen: () => {} },
    (request, info) => handler(request, { address: info.remoteAddr.hostname }, info.completed),
  );
  // Its accept loop ends on an accept error (out of descriptors) by rejecting this promise.
  server.finished.catch((error) => log(`gateway: the runtime stopped accepting connections: ${error}`));
  return {
    addr: server.addr,
    // Closes the listener now; the promise, which waits for every connection without a bound, is not awaited.
    close: () => void server.shutdown().catch(() => {}),
  };
}

function ownListener(
  serve: ServeOnConnection,
  options: ListenOptions,
  log: (line: string) => void,
  handler: RequestHandler,
): Listening {
  const { limits } = options;
  const listener = Deno.listen(
    {
      hostname: options.hostname,
      port: options.port,
      transport: "tcp",
      reusePort: options.reusePort ?? false,
    },
  );
  const open = new Set<Connection>();
  const stats: ConnectionStats = {
    open: 0,
    limit: limits.maxConnections,
    waitsAtLimit: 0,
    acceptFailures: 0,
    closed: { head: 0, idle: 0, address: 0 },
  };
  const perAddress = new Map<string, number>();
  const maxPerAddress = limits.maxPerAddress ?? 0;
  const clientIdleMs = Math.min(limits.keepAliveTimeoutMs, limits.headTimeoutMs);
  let closing = false;
  let slotFreed: (() => void) | undefined;

  const sweep = setInterval(() => {
    const now = performance.now();
    for (const conn of open) {
      if (conn.active > 0) continue;
      const limit = !conn.served
        ? limits.headTimeoutMs
        : conn.proxy
        ? limits.keepAliveTimeoutMs
        : clientIdleMs;
      if (now - conn.idleSince < limit) continue;
      stats.closed[conn.served ? "idle" : "head"]++;
      conn.abort.abort();
      open.delete(conn);
    }
  }, Math.min(SWEEP_MS, limits.headTimeoutMs, limits.keepAliveTimeoutMs));
  Deno.unrefTimer(sweep);

  const onError = (error: unknown) => {
    // A stream cut off its client on purpose (lib/http/stream_response.ts) is errored, and so reported here.
    if (!(error instanceof ClientStalled)) console.error("gateway: unexpected failure:", error);
    return new Response(null, { status: 500 });
  };

  const accept = (tcp: Deno.Conn) => {
    const from = (tcp.remoteAddr as Deno.NetAddr).hostname;
    const proxy = limits.exempt?.(from) ?? false;
    const counted = maxPerAddress > 0 && !proxy;
    if (counted) {
      const now = perAddress.get(from) ?? 0;
      if (now >= maxPerAddress) {
        stats.closed.address++;
        try {
          tcp.close();
        } catch { /* already gone */ }
        return;
      }
      perAddress.set(from, now + 1);
    }
    const conn = new Connection(from, proxy);
    open.add(conn);
    let closeAfter = false;
    // The runtime does not act on an answer's `Connection: close` (a refusal that leaves the request body
    // unread), so the listener does, once the answer is delivered. Only refusals carry it: the status spares
    // every other answer a header lookup.
    const noteClose = (response: Response) => {
      if (response.status < 400 || response.headers.get("connection") !== "close") return response;
      // Sent as it is (static, with its length): the connection is cut only after a linger, by which time the
      // body has left the engine's buffer.
      closeAfter = true;
      return response;
    };
    const perRequest = (request: Request, info: Deno.ServeHandlerInfo) => {
      conn.active++;
      conn.served = true;
      const done = () => {
        if (--conn.active === 0) conn.idleSince = performance.now();
        // Idle now, so a stop ends it at once too.
        if (closeAfter) conn.closeAfterLinger();
      };
      info.completed.then(done, done);
      const answer = handler(request, conn, info.completed);
      return answer instanceof Response ? noteClose(answer) : answer.then(noteClose);
    };
    // A connection that ends in any way (reset by its client included) is only one connection less.
    serve(tcp, conn.abort.signal, perRequest, onError, () => {}).finished.catch(() => {}).finally(() => {
      open.delete(conn);
      conn.ended();
      if (counted) {
        const left = (perAddress.get(from) ?? 1) - 1;
        if (left > 0) perAddress.set(from, left);
        else perAddress.delete(from);
      }
      slotFreed?.();
    });
  };

  (async () => {
    let failures = 0;
    let failingSince = 0;
    while (!closing) {
      if (open.size >= stats.limit) {
        stats.waitsAtLimit++;
        await new Promise<void>((resolve) => slotFreed = resolve);
        slotFreed = undefined;
        continue;
      }
      try {
        const tcp = await listener.accept();
        if (failures) {
          log(
            `gateway: accepting connections again, after ${Math.round(performance.now() - failingSince)} ms`,
          );
          failures = 0;
        }
        accept(tcp);
      } catch (error) {
        if (closing) break;
        stats.acceptFailures++;
        const message = (error as Error).message;
        if (failures++ === 0) {
          failingSince = performance.now();
          log(`gateway: cannot accept connections (${message}); new ones wait until this clears`);
        }
        if (OUT_OF_DESCRIPTORS.test(message) && open.size - RESERVE < stats.limit) {
          // What the process could hold, less room for the backends those connections need.
          stats.limit = Math.max(16, open.size - RESERVE);
          log(
            `gateway: out of file descriptors at ${open.size} connections; taking at most ${stats.limit} ` +
              "from now on (raise ulimit -n, or set GATEWAY_MAX_CONNECTIONS)",
          );
        }
        await new Promise((resolve) =>
          setTimeout(resolve, RETRY_MS[Math.min(failures, RETRY_MS.length) - 1])
        );
      }
    }
  })();

  // The runtime's own listener on a connection its client has just closed throws BadResource from inside the
  // abort, which would otherwise end the process (or the worker) at the moment it is draining.
  const closeIdle = () => {
    globalThis.addEventListener("error", ignoreClosedConnection);
    try {
      for (const conn of open) if (conn.active === 0) conn.abort.abort();
    } finally {
      globalThis.removeEventListener("error", ignoreClosedConnection);
    }
  };
  return {
    addr: listener.addr as Deno.NetAddr,
    stats: () => ({ ...stats, open: open.size, closed: { ...stats.closed } }),
    close() {
      closing = true;
      clearInterval(sweep);
      slotFreed?.();
      listener.close();
      // Idle connections have nothing left to finish; a client on one learns at once to go elsewhere.
      closeIdle();
    },
    closeIdle,
  };
}

/** A connection the client closed first has nothing left to abort. */
function ignoreClosedConnection(event: Event): void {
  if ((event as ErrorEvent).error instanceof Deno.errors.BadResource) event.preventDefault();
}
