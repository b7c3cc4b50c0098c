/**
 * @module The backend connections: per origin, keep-alive connections (`backend_connection.ts`, one call at a
 * time each), the idle ones on a stack. A stack hands out a free connection and takes it back in constant time,
 * the last one used first: its socket is the likeliest to be open still. An idle connection is closed after
 * the keep-alive time (a sweep once a second while any is idle), and at once when the backend closes it.
 */
import { BackendConnection, type ExchangeHandler } from "./backend_connection.ts";

const SWEEP_MS = 1_000;

export interface Origin {
  hostname: string;
  port: number;
  tls: boolean;
}

type Connect = (origin: Origin) => Promise<Deno.Conn>;

const connectOrigin: Connect = async ({ hostname, port, tls }) => {
  const conn = tls ? await Deno.connectTls({ hostname, port }) : await Deno.connect({ hostname, port });
  // What undici set: a request goes out in one packet, not held back for the next.
  if (!tls) (conn as Deno.TcpConn).setNoDelay(true);
  return conn;
};

/** One origin's connections; each is on the idle stack exactly when it can take a call. */
class OriginConnections {
  readonly #idle: BackendConnection[] = [];
  #sweep?: ReturnType<typeof setInterval>;

  constructor(private readonly origin: Origin, private readonly connect: Connect) {}

  /** Sends `request` on a free connection, or on a new one; a failed connect is the handler's error. */
  dispatch(request: Uint8Array, handler: ExchangeHandler): void {
    const now = performance.now();
    let connection = this.#idle.pop();
    while (connection && (connection.closed || connection.keepUntil <= now)) {
      connection.close();
      connection = this.#idle.pop();
    }
    if (connection) connection.start(request, handler);
    else this.#open(request, handler);
  }

  #open(request: Uint8Array, handler: ExchangeHandler): void {
    this.connect(this.origin).then(
      (conn) =>
        new BackendConnection(
          conn,
          (free) => this.#free(free),
          (again, to) => this.#open(again, to),
        ).start(request, handler),
      (error) => handler.onError(error instanceof Error ? error : new Error(String(error))),
    );
  }

  #free(connection: BackendConnection): void {
    this.#idle.push(connection);
    if (this.#sweep === undefined) {
      const sweep = setInterval(() => this.#swept(), SWEEP_MS);
      // Idle connections are no reason to keep the process alive.
      Deno.unrefTimer(sweep);
      this.#sweep = sweep;
    }
  }

  /** Closes the connections idle past their time; the stack's bottom has been idle longest. */
  #swept(): void {
    const now = performance.now();
    const idle = this.#idle;
    let kept = 0;
    for (const connection of idle) {
      if (connection.closed || connection.keepUntil <= now) connection.close();
      else idle[kept++] = connection;
    }
    idle.length = kept;
    if (kept === 0) {
      clearInterval(this.#sweep);
      this.#sweep = undefined;
    }
  }

  /** Closes every idle connection (calls under way finish on theirs). */
  closeIdle(): void {
    for (const connection of this.#idle) connection.close();
    this.#idle.length = 0;
  }
}

/** Backend calls by origin; an origin's connections are made as calls need them. */
export class Connections {
  readonly #origins = new Map<string, OriginConnections>();

  constructor(private readonly connect: Connect = connectOrigin) {}

  /** `origin` as a URL's origin (`http://host:port`). */
  dispatch(origin: string, request: Uint8Array, handler: ExchangeHandler): void {
    let connections = this.#origins.get(origin);
    if (!connections) {
      const url = new URL(origin);
      const tls = url.protocol === "https:";
      const target = {
        hostname: url.hostname.replace(/^\[|\]$/g, ""),
        port: Number(url.port) || (tls ? 443 : 80),
        tls,
      };
      this.#origins.set(origin, connections = new OriginConnections(target, this.connect));
    }
    connections.dispatch(request, handler);
  }

  closeIdle(): void {
    for (const connections of this.#origins.values()) connections.closeIdle();
  }
}
