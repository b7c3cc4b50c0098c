/**
 * @module Reading a backend's streamed body as events: payloads (NDJSON lines, SSE data) out of bytes, a
 * bounded wait between reads, and the first event read before the stream is handed on, so a backend that
 * fails at once still fails over.
 *
 * One object does it all, pulled by the response: each backend read is framed and decoded at once, in plain
 * code, into a queue of events the response takes without waiting. Chained async generators (reads, payloads,
 * decoding, the error guard, the first event) cost five promise hops per event and were the largest part of a
 * streamed request's garbage; TransformStreams before them cost a tenth of its CPU time.
 */
import { BackendFailure, BadGateway, GatewayError } from "../errors.ts";
import type { OpenResponse } from "./http_call.ts";
import type { ChatEvent } from "../chat/types.ts";
import type { CallContext } from "./adapter.ts";
import type { ChunkReader } from "./upstream.ts";
import type { Framing } from "./stream_framing.ts";
import { IdleReads } from "./idle_reads.ts";

export { type Framing, lineFraming, sseFraming } from "./stream_framing.ts";

/** The events of a backend's answer, as the response pulls them. */
export interface StreamEvents extends AsyncIterableIterator<ChatEvent> {
  /** The next event if it has arrived already, without waiting: several often come in one read. */
  take?(): ChatEvent | undefined;
  /** Stops the stream at once, as `return` does, without making a promise. */
  close?(): void;
}

export interface EventStream {
  /** The answer's events; the first is already read. Throws a GatewayError if the stream breaks. */
  events: StreamEvents;
  /** Model name as the backend reported it. */
  model: string;
  /** Stops the backend's work at once (closes the connection). */
  abort(): void;
  /**
   * The answer is complete: once `events` is returned, what is left of the body (its end) is read rather than
   * cut, so the connection can serve another request.
   */
  finish(): void;
}

/** Turns one backend's payloads into events, in order; stateful, one per stream. */
export interface PayloadDecoder {
  /** Adds the events of one payload to `out`; true once the answer is complete (nothing after it is read). */
  payload(text: string, out: ChatEvent[]): boolean;
  /** The body ended before the answer was complete: adds what is still owed, or throws. */
  end(out: ChatEvent[]): void;
  /** The model as the backend named it, once read. */
  readonly model?: string;
}

export interface StreamLimits {
  /** Longest silence between two reads. */
  idleMs: number;
  /** Most bytes one payload may span; a server sending an endless line must not fill the gateway's memory. */
  maxEventBytes: number;
}

export function streamLimits(ctx: CallContext): StreamLimits {
  return { idleMs: ctx.idleTimeoutMs, maxEventBytes: ctx.maxAnswerBytes };
}

const DONE: IteratorReturnResult<undefined> = { done: true, value: undefined };

/** Decodes chunks that end on a whole character; keeps a byte-order mark (only a body's first bytes drop it). */
const WHOLE_TEXT = new TextDecoder("utf-8", { ignoreBOM: true });

class BackendEvents implements StreamEvents {
  #queue: ChatEvent[] = [];
  #at = 0;
  /** The decoder has the whole answer: nothing more is read. */
  #complete = false;
  /** The stream was returned or broke: nothing more is delivered. */
  #closed = false;
  /** The break that follows the events still queued: they came before it, so they are delivered first. */
  #broken: GatewayError | undefined;
  /** The response delivered the answer's end: the body's rest is read, so the connection can be reused. */
  delivered = false;
  /** The stream's own decoder, once a chunk ended inside a character (it keeps that character's start). */
  #text?: TextDecoder;
  /** Whether any bytes were decoded: a byte-order mark is dropped only at the body's start. */
  #started = false;
  /** Bytes read since a payload last completed (a payload overruns the bound by at most one read). */
  #unframed = 0;
  /** The bounded wait for reads, made at the first read that must wait: a short answer arrives whole. */
  #reads: IdleReads<Uint8Array> | undefined;

  constructor(
    private readonly reader: ChunkReader,
    private readonly open: OpenResponse,
    private readonly framing: Framing,
    readonly decoder: PayloadDecoder,
    private readonly limits: StreamLimits,
    private readonly stop: () => void,
  ) {}

  #idleReads(): IdleReads<Uint8Array> {
    const reader = this.reader;
    return new IdleReads({ next: () => reader.read() }, this.limits.idleMs, this.stop);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  take(): ChatEvent | undefined {
    if (this.#at >= this.#queue.length) return undefined;
    const event = this.#queue[this.#at++];
    if (this.#at === this.#queue.length) {
      this.#queue = [];
      this.#at = 0;
    }
    return event;
  }

  next(): Promise<IteratorResult<ChatEvent>> {
    const ready = this.take();
    if (ready) return Promise.resolve({ done: false, value: ready });
    const broken = this.#broken;
    if (broken) {
      this.#close();
      return Promise.reject(broken);
    }
    if (this.#complete || this.#closed) return Promise.resolve(DONE);
    return this.fill().then(() => {
      const event = this.take();
      return event ? { done: false, value: event } : DONE;
    });
  }

  /** Reads until an event is queued or the answer is complete; a break stops the backend and throws. */
  async fill(): Promise<void> {
    try {
      while (this.#at >= this.#queue.length && !this.#complete && !this.#closed && !this.#broken) {
        const read = this.reader.take() ?? await (this.#reads ??= this.#idleReads()).next();
        if (this.#closed) return;
        if (read.done) {
          this.#decode(this.framing.push(this.#text?.decode() ?? ""));
          this.#decode(this.framing.end());
          if (!this.#complete) this.decoder.end(this.#queue);
          this.#complete = true;
          break;
        }
        const payloads = this.framing.push(this.#textOf(read.value));
        this.#unframed = payloads.length ? 0 : this.#unframed + read.value.byteLength;
        if (this.#unframed > this.limits.maxEventBytes) {
          throw new BadGateway(
            `The model server sent a stream event larger than ${this.limits.maxEventBytes} bytes`,
          );
        }
        this.#decode(payloads);
      }
    } catch (error) {
      const failure = error instanceof GatewayError
        ? error
        : new BackendFailure("the model server's stream broke off", true, true);
      if (this.#at < this.#queue.length) {
        // The backend is let go now; the events it sent before the break still go out.
        this.#broken = failure;
        this.#reads?.close();
        this.stop();
        return;
      }
      this.#close();
      throw failure;
    }
  }

  /**
   * A chunk's text. Lines and events end in ASCII, so most chunks end on a whole character and any decoder
   * will do: a shared one, instead of a decoder (and its native state) per stream.
   */
  #textOf(bytes: Uint8Array): string {
    const started = this.#started;
    this.#started = true;
    if (this.#text === undefined && bytes[bytes.length - 1] < 0x80 && bytes[0] !== 0xef) {
      return WHOLE_TEXT.decode(bytes);
    }
    this.#text ??= new TextDecoder("utf-8", { ignoreBOM: started });
    return this.#text.decode(bytes, { stream: true });
  }

  #decode(payloads: string[]): void {
    for (let i = 0; i < payloads.length && !this.#complete; i++) {
      this.#complete = this.decoder.payload(payloads[i], this.#queue);
    }
  }

  return(): Promise<IteratorResult<ChatEvent>> {
    this.#close();
    return Promise.resolve(DONE);
  }

  close(): void {
    this.#close();
  }

  #close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#queue = [];
    this.#at = 0;
    this.#reads?.close();
    if (this.delivered) readToEnd(this.reader, this.open, this.stop);
    else this.stop();
  }
}

/**
 * Reads an open streamed response: framing, decoding, idle timeout, and a single `stop` that closes the backend
 * connection whether the stream ends, breaks, or the client leaves. Returns once the first event has come.
 */
export async function readEventStream(
  open: OpenResponse,
  framing: Framing,
  decoder: PayloadDecoder,
  model: string,
  limits: StreamLimits,
): Promise<EventStream> {
  const stop = () => {
    open.abort.abort();
    open.release();
  };
  const events = new BackendEvents(open.answer.chunks(), open, framing, decoder, limits, stop);
  await events.fill();
  return {
    events,
    model: decoder.model ?? model,
    abort: stop,
    finish: () => events.delivered = true,
  };
}

/** What a complete answer's body may still hold after its last event: its end, and little else. */
const END_BYTES = 64 * 1024;
const END_MS = 1_000;

/**
 * Reads what follows a complete answer's last event (typically only the end of the chunked body), so the
 * runtime can put the backend connection back in its pool; a backend that sends more, or does not end its
 * body soon, is cut off instead. Either way the response is released here, not left to a timer.
 */
function readToEnd(reader: ChunkReader, open: OpenResponse, stop: () => void): void {
  let read;
  try {
    read = reader.take();
  } catch {
    return open.release();
  }
  // Usually the body ended with the answer's last event, which is known without waiting, a timer or a promise.
  if (read?.done) open.release();
  else void readRest(reader, open, stop, read);
}

async function readRest(
  reader: ChunkReader,
  open: OpenResponse,
  stop: () => void,
  first: IteratorResult<Uint8Array, undefined> | undefined,
) {
  let left = END_BYTES;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let taken = first;
  try {
    for (;;) {
      let read = taken ?? reader.take();
      taken = undefined;
      if (read === undefined) {
        timer ??= setTimeout(stop, END_MS);
        read = await reader.read();
      }
      if (read.done) break;
      left -= read.value.byteLength;
      if (left < 0) return stop();
    }
  } catch {
    // Cut off by the bound or by the backend: nothing is owed to the client any more.
  } finally {
    clearTimeout(timer);
    open.release();
  }
}
