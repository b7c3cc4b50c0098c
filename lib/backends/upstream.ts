/**
 * @module The HTTP client the gateway calls its backends with: keep-alive connections per server on the
 * runtime's own TCP (`connections.ts`, `backend_connection.ts`). A call is its request's bytes, one handler
 * object and the body's chunks as they were read, with no request or response objects, no stream and no
 * promise per chunk. Calls one after another cost 28–72 µs less each than through undici's `Client` on the
 * runtime's Node layer (eight alternating runs; the README's performance notes have the rest).
 * Knows nothing of chat: one POST, its status, its headers and its body.
 */
import { Buffer } from "node:buffer";
import type { Exchange, ExchangeHandler } from "./backend_connection.ts";
import { Connections } from "./connections.ts";
import type { CallAbort } from "./call_abort.ts";
import { memoByUrl } from "./url_memo.ts";
import { copyOf, framedRequest } from "./byte_blocks.ts";

/** The next chunk of a body, or its end; `read` rejects when the body breaks off. */
export interface ChunkReader {
  read(): Promise<IteratorResult<Uint8Array, undefined>>;
  /**
   * The next chunk or the end if either has arrived already, else undefined, without waiting: a body often
   * arrives with its head, or in one piece, and then needs no promise and no idle timer. Throws as `read`
   * rejects.
   */
  take(): IteratorResult<Uint8Array, undefined> | undefined;
  /** Stops reading and closes the connection. */
  cancel(): void;
}

export interface UpstreamAnswer {
  status: number;
  /** A response header, lower-case name. */
  header(name: string): string | undefined;
  /** The body chunk by chunk (streamed answers). */
  chunks(): ChunkReader;
  /**
   * The whole body as text. Rejects with `BodyTooLarge` (and closes the connection) as soon as more than
   * `limit` bytes arrived, and with the cause when the body breaks off.
   */
  text(limit: number): Promise<string>;
}

export class BodyTooLarge extends Error {}

/**
 * The gateway's own deadlines (connect, first byte, whole answer, idle stream) bound every call; the
 * connections keep none of their own.
 */
const connections = new Connections();

/** Closes the idle backend connections, as the gateway stops (calls under way keep theirs). */
export function closeIdleConnections(): void {
  connections.closeIdle();
}

/** Body bytes held for a reader that is not keeping up before the connection stops being read. */
const HIGH_WATER = 64 * 1024;

interface Target {
  origin: string;
  /** The request line and host header, up to the headers of the call. */
  head: string;
}

/** Backend URLs are few and reused on every call: each is parsed once. */
const targetOf = memoByUrl((url): Target => {
  const u = new URL(url);
  return { origin: u.origin, head: `POST ${u.pathname}${u.search} HTTP/1.1\r\nhost: ${u.host}\r\n` };
});

type Headers = Record<string, string>;

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
/** Headers the connection writes itself, or that would change how the request is framed or answered. */
const OWN = /^(?:host|content-length|transfer-encoding|connection|keep-alive|upgrade|expect|te|trailer)$/i;

/**
 * The request's bytes. A header that would break the request's framing (a line break in a key) or that the
 * connection sets itself is refused, as undici refused them.
 */
function requestBytes(head: string, headers: Record<string, string>, body: string): Uint8Array {
  let text = head;
  for (const name in headers) {
    const value = headers[name];
    if (!TOKEN.test(name) || !FIELD_VALUE.test(value) || OWN.test(name)) {
      throw new TypeError(`invalid header ${JSON.stringify(name)}`);
    }
    text += `${name}: ${value}\r\n`;
  }
  return framedRequest(text, body);
}

const DONE: IteratorResult<Uint8Array, undefined> = { done: true, value: undefined };

/**
 * One call: the handler the client reports to, and the answer it resolves with. The body is queued as it
 * arrives, for whichever way it is then read (whole or chunk by chunk).
 */
class Call implements ExchangeHandler, UpstreamAnswer {
  status = 0;
  #headers: Headers = {};
  #controller?: Exchange;
  #answered = false;
  #queue: Uint8Array[] = [];
  #queued = 0;
  #ended = false;
  /** Read whole: the limit bounds what is held, so the connection is never paused. */
  #whole = false;
  #failure: unknown;
  /** Called when the queue gains a chunk, ends or fails: a reader waits for it. */
  #wake?: () => void;

  constructor(
    private readonly resolve: (answer: UpstreamAnswer) => void,
    private readonly reject: (error: unknown) => void,
    private readonly stop: CallAbort,
  ) {}

  onStart(controller: Exchange): void {
    this.#controller = controller;
    if (this.stop.aborted) controller.abort(this.stop.reason as Error);
  }

  onHead(status: number, headers: Headers): void {
    this.status = status;
    this.#headers = headers;
    this.#answered = true;
    this.resolve(this);
  }

  onData(bytes: Uint8Array, start: number, end: number): void {
    // A chunk queued behind another waits for a reader that is behind, maybe for long: it gets bytes of its
    // own, so that a slow client's queue keeps no shared blocks (at most its first chunk's).
    const chunk = this.#queue.length ? bytes.slice(start, end) : copyOf(bytes, start, end);
    this.#queue.push(chunk);
    this.#queued += chunk.byteLength;
    if (this.#queued > HIGH_WATER && !this.#whole) this.#controller?.pause();
    this.#wake?.();
  }

  onEnd(): void {
    this.#ended = true;
    this.#wake?.();
  }

  onError(error: Error): void {
    this.fail(error);
  }

  /** Ends the call with `error`, wherever it is: before the answer, or while its body is read. */
  fail(error: unknown): void {
    if (this.#ended || this.#failure !== undefined) return;
    this.#failure = error ?? new Error("the call was cut");
    if (!this.#answered) this.reject(this.#failure);
    this.#controller?.abort(this.#failure as Error);
    this.#wake?.();
  }

  header(name: string): string | undefined {
    return this.#headers[name];
  }

  #next(): IteratorResult<Uint8Array, undefined> | undefined {
    const chunk = this.#queue.shift();
    if (chunk) {
      this.#queued -= chunk.byteLength;
      if (this.#queued <= HIGH_WATER && this.#controller?.paused) this.#controller.resume();
      return { done: false, value: chunk };
    }
    if (this.#failure !== undefined) throw this.#failure;
    if (this.#ended) return DONE;
  }

  chunks(): ChunkReader {
    return {
      // Answered from the queue when it holds a chunk, the end or a failure; else when the queue next changes.
      // Taking a chunk can resume a paused connection, and the client may hand over the next chunk within that
      // call: the waiter is off while a chunk is taken, so that one is queued rather than taken too.
      read: () =>
        new Promise((resolve, reject) => {
          const attempt = () => {
            this.#wake = undefined;
            let ready;
            try {
              ready = this.#next();
            } catch (error) {
              return reject(error);
            }
            if (ready) resolve(ready);
            else this.#wake = attempt;
          };
          attempt();
        }),
      take: () => this.#next(),
      cancel: () => this.fail(new Error("reading stopped")),
    };
  }

  text(limit: number): Promise<string> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (this.#queued > limit) {
          this.#wake = undefined;
          const tooLarge = new BodyTooLarge();
          this.fail(tooLarge);
          return reject(tooLarge);
        }
        if (this.#failure !== undefined) return reject(this.#failure);
        if (!this.#ended) return;
        this.#wake = undefined;
        const queue = this.#queue;
        const bytes = queue.length === 1 ? queue[0] : Buffer.concat(queue);
        resolve(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8"));
      };
      this.#wake = check;
      this.#whole = true;
      if (this.#controller?.paused) this.#controller.resume();
      check();
    });
  }
}

/**
 * POSTs `body` and resolves with the answer once its head arrived. `stop` aborts the call at any point,
 * the body's reading included, and closes its connection.
 */
export function post(
  url: string,
  headers: Record<string, string>,
  body: string,
  stop: CallAbort,
): Promise<UpstreamAnswer> {
  const { origin, head } = targetOf(url);
  return new Promise((resolve, reject) => {
    const request = requestBytes(head, headers, body);
    const call = new Call(resolve, reject, stop);
    stop.onAbort((reason) => call.fail(reason));
    connections.dispatch(origin, request, call);
  });
}
