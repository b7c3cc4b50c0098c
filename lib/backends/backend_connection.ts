/**
 * @module One keep-alive HTTP/1.1 connection to a backend, on the runtime's own TCP (or TLS) connection, its
 * answers parsed by http-parser-js: one exchange at a time, its body handed over chunk by chunk as it is read.
 * Through undici on the runtime's Node layer a call cost 28–72 µs more, most of it in the socket's write
 * through Node's streams (the README's performance notes).
 * A read is always pending while the connection is open, so a backend closing it while idle is seen at once;
 * the body of a reader that is not keeping up is paused by not reading on.
 */
import { HTTPParser } from "http-parser-js";
import { Buffer } from "node:buffer";

/** What one exchange reports to, in order: its start (with the means to steer it), head, data, end or error. */
export interface ExchangeHandler {
  onStart(exchange: Exchange): void;
  onHead(status: number, headers: Record<string, string>): void;
  /** `bytes` is the connection's read buffer: `start` to `end` are the body's, and only during the call. */
  onData(bytes: Uint8Array, start: number, end: number): void;
  onEnd(): void;
  onError(error: Error): void;
}

/** One exchange's controls. Each exchange has its own, so a call done with stays off the next one's. */
export interface Exchange {
  readonly paused: boolean;
  pause(): void;
  resume(): void;
  /** Ends the exchange with `reason` (reported to its handler) and closes the connection. */
  abort(reason: Error): void;
}

/** Bytes read at a time; a buffer per connection, reused, the body's bytes copied out of it. */
const READ_SIZE = 16 * 1024;
/** How long an idle connection is kept, as undici keeps one: below the 5 s after which uvicorn (vLLM) closes it. */
export const KEEP_ALIVE_MS = 4_000;

type Headers = Record<string, string>;

export class ConnectionLost extends Error {}

class Active implements Exchange {
  paused = false;
  /** Any byte of the answer arrived: past that point the call cannot be sent again. */
  answered = false;
  /** The whole request went out: before that the connection cannot take another, whatever the answer. */
  written = false;
  /** A 1xx answer is being read: its end is not the answer's. */
  interim = false;

  constructor(
    readonly connection: BackendConnection,
    /**
     * Kept while the call may still be sent again (no answer yet) or is being written, then let go: a long
     * stream's request would otherwise keep the block it was cut from for as long as the stream runs.
     */
    public request: Uint8Array | undefined,
    readonly handler: ExchangeHandler,
  ) {}

  /** The request is written and answered: nothing needs it any more. */
  settled(): void {
    if (this.written && this.answered) this.request = undefined;
  }

  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
    this.connection.resumed(this);
  }

  abort(reason: Error): void {
    this.connection.ended(this, reason);
  }
}

export class BackendConnection {
  readonly #parser = new HTTPParser(HTTPParser.RESPONSE);
  readonly #buffer = Buffer.allocUnsafe(READ_SIZE);
  /** The same bytes as a plain Uint8Array, whose views cost less than a Buffer's. */
  readonly #bytes = new Uint8Array(this.#buffer.buffer, this.#buffer.byteOffset, READ_SIZE);
  #active?: Active;
  /** The read loop's wait while the active exchange is paused. */
  #wake?: () => void;
  /** Where the parser was when the active answer ended: bytes past it were not asked for. */
  #endedAt = -1;
  #keepAlive = false;
  /** How long the backend lets the connection stay idle after this answer, as far as it said. */
  #keepFor = KEEP_ALIVE_MS;
  closed = false;
  /** Exchanges completed on it: a connection that served one was reused, and may have been closed meanwhile. */
  served = 0;
  /** performance.now() after which it is not to be used again. */
  keepUntil = 0;

  constructor(
    private readonly conn: Deno.Conn,
    /** The connection is free for the next exchange. */
    private readonly onFree: (connection: BackendConnection) => void,
    /** The exchange's request can be sent again elsewhere: the connection was lost before any answer to it. */
    private readonly onResend: (request: Uint8Array, handler: ExchangeHandler) => void,
  ) {
    const parser = this.#parser;
    parser[HTTPParser.kOnHeadersComplete] = (info) =>
      this.#head(info.statusCode, info.headers, info.shouldKeepAlive);
    parser[HTTPParser.kOnBody] = (chunk, offset, length) => {
      const active = this.#active;
      if (!active || active.interim || this.#endedAt >= 0) return;
      // The chunk is the parser's view into `#buffer`: the handler gets `#bytes`, a view costing less, and
      // copies what it keeps (the buffer is read into again).
      const start = chunk.byteOffset - this.#buffer.byteOffset + offset;
      active.handler.onData(this.#bytes, start, start + length);
    };
    parser[HTTPParser.kOnMessageComplete] = () => {
      const active = this.#active;
      if (!active || this.#endedAt >= 0) return;
      if (active.interim) {
        active.interim = false;
        return;
      }
      // The parser's own position (a field its typings leave out; a test sends stray bytes to check it).
      this.#endedAt = (parser as unknown as { offset: number }).offset;
    };
    this.#read();
  }

  /** Sends `request` (a whole HTTP/1.1 request) and reports its answer to `handler`. */
  start(request: Uint8Array, handler: ExchangeHandler): void {
    const active = new Active(this, request, handler);
    this.#active = active;
    this.#endedAt = -1;
    this.conn.ref();
    handler.onStart(active);
    if (this.#active === active) this.#write(active);
  }

  async #write(active: Active): Promise<void> {
    const request = active.request!;
    try {
      for (let sent = 0; sent < request.byteLength;) {
        sent += await this.conn.write(sent ? request.subarray(sent) : request);
      }
      active.written = true;
      active.settled();
    } catch (error) {
      // A write that fails once its exchange is over still means a broken connection.
      if (this.#active === active) this.#lost(error);
      else this.close();
    }
  }

  #head(status: number, raw: string[], keepAlive: boolean): void {
    const active = this.#active;
    // After the answer's end, only stray bytes: the connection is closed once they are parsed.
    if (!active || this.#endedAt >= 0) return;
    // 1xx answers come before the answer itself (101 is not asked for).
    if (status >= 100 && status < 200) {
      active.interim = true;
      return;
    }
    const headers: Headers = {};
    for (let i = 0; i < raw.length; i += 2) {
      const name = raw[i].toLowerCase();
      const value = raw[i + 1];
      headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
    }
    this.#keepAlive = keepAlive;
    const hint = headers["keep-alive"]?.match(/timeout=(\d+)/i);
    // A server that says how long it keeps the connection is left a second's margin, as undici leaves it.
    this.#keepFor = hint ? Math.min(KEEP_ALIVE_MS, Number(hint[1]) * 1000 - 1000) : KEEP_ALIVE_MS;
    active.handler.onHead(status, headers);
  }

  async #read(): Promise<void> {
    const conn = this.conn;
    const buffer = this.#buffer;
    for (;;) {
      while (this.#active?.paused) await new Promise<void>((resolve) => this.#wake = resolve);
      if (this.closed) return;
      let n: number | null;
      try {
        n = await conn.read(buffer);
      } catch (error) {
        return this.#lost(error);
      }
      if (this.closed) return;
      if (n === null) return this.#lost(null);
      this.#parse(n);
    }
  }

  #parse(n: number): void {
    const active = this.#active;
    // Bytes nobody asked for: the connection is out of step and cannot be trusted with another call.
    if (!active) return this.close();
    active.answered = true;
    active.settled();
    const outcome = this.#parser.execute(this.#buffer, 0, n);
    if (outcome instanceof Error) {
      return this.ended(active, new Error(`the backend's answer is not HTTP (${outcome.message})`));
    }
    if (this.#endedAt < 0 || this.#active !== active) return;
    const reusable = this.#keepAlive && active.written && this.#endedAt === n && this.#keepFor > 0;
    this.#active = undefined;
    this.served++;
    active.handler.onEnd();
    if (!reusable) return this.close();
    this.keepUntil = performance.now() + this.#keepFor;
    this.conn.unref();
    this.onFree(this);
  }

  /** The connection closed or broke under an exchange or while idle. */
  #lost(error: unknown): void {
    const active = this.#active;
    if (this.closed || !active) return this.close();
    // An answer read to the connection's close (no length, not chunked) ends there.
    if (error === null && active.answered && this.#parser.finish() === undefined && this.#endedAt >= 0) {
      this.#active = undefined;
      this.close();
      return active.handler.onEnd();
    }
    if (!active.answered && this.served > 0) {
      // A kept connection the backend closed as the call was sent: the backend never read it, so it goes again
      // on a new connection, once.
      this.#active = undefined;
      this.close();
      return this.onResend(active.request!, active.handler);
    }
    this.ended(
      active,
      new ConnectionLost(error === null ? "the backend closed the connection" : String(error)),
    );
  }

  /** Ends `active`, if still the current exchange, with `error`, and closes the connection. */
  ended(active: Active, error: Error): void {
    if (this.#active !== active) return;
    this.#active = undefined;
    this.close();
    active.handler.onError(error);
  }

  resumed(active: Active): void {
    if (this.#active === active) this.#wake?.();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.#wake?.();
    try {
      this.conn.close();
    } catch {
      // Closed already by the runtime (the peer reset it).
    }
  }
}
