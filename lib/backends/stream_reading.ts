/**
 * @module Reading a backend's streamed body: payloads (NDJSON lines, SSE data) out of bytes, a bounded wait
 * between chunks, and the first event read before the stream is handed on, so a backend that fails at once
 * still fails over. The body is read with one reader and framed in plain code rather than through a chain of
 * TransformStreams: each piped stage costs promise hops per chunk and a setup per request, which was a tenth
 * of a streamed request's CPU time.
 */
import { createParser } from "eventsource-parser";
import { BackendFailure, BadGateway, GatewayError } from "../errors.ts";
import type { OpenResponse } from "./http_call.ts";
import type { ChatEvent } from "../chat/types.ts";
import type { CallContext } from "./adapter.ts";
import type { ChunkReader } from "./upstream.ts";

/** Cuts decoded text into payloads, keeping what is not complete yet for the next piece. */
export interface Framing {
  /** The payloads that `text` completes, in order. */
  push(text: string): string[];
  /** What is left once the body has ended. */
  end(): string[];
}

/** NDJSON framing: lines (LF or CRLF); a last line without a newline is still delivered. */
export function lineFraming(): Framing {
  let rest = "";
  return {
    push(text) {
      const parts = (rest + text).split("\n");
      rest = parts.pop()!;
      return parts.map((line) => line.endsWith("\r") ? line.slice(0, -1) : line);
    },
    end() {
      const last = rest;
      rest = "";
      return last ? [last] : [];
    },
  };
}

/** SSE framing: each event's data. An event the body ends in the middle of is not delivered. */
export function sseFraming(): Framing {
  let done: string[] = [];
  const parser = createParser({ onEvent: (event) => done.push(event.data) });
  return {
    push(text) {
      parser.feed(text);
      const out = done;
      done = [];
      return out;
    },
    end: () => [],
  };
}

/**
 * Yields from `source`, failing when a chunk takes longer than `idleMs` to arrive. Only the waits count: while
 * the consumer holds a chunk (a slow client) the backend is not idle. One timer serves the whole stream and
 * is re-armed for what is left of the current wait when it fires early, because a timer per chunk cost
 * a fifth of the gateway's work per streamed chunk.
 */
export async function* withIdleTimeout<T>(source: AsyncIterator<T>, idleMs: number, onTimeout: () => void) {
  let waitingSince: number | undefined;
  let fail: ((error: unknown) => void) | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const check = () => {
    timer = undefined;
    if (waitingSince === undefined) return;
    const idle = performance.now() - waitingSince;
    if (idle < idleMs) {
      timer = setTimeout(check, idleMs - idle);
      return;
    }
    onTimeout();
    fail?.(new BackendFailure(`model server sent nothing for ${idleMs} ms`, true, true, 504));
  };
  try {
    for (;;) {
      waitingSince = performance.now();
      timer ??= setTimeout(check, idleMs);
      const next = await new Promise<IteratorResult<T>>((resolve, reject) => {
        fail = reject;
        source.next().then(resolve, reject);
      });
      waitingSince = undefined;
      if (next.done) return;
      yield next.value;
    }
  } finally {
    clearTimeout(timer);
  }
}

export interface EventStream {
  /** The answer's events; the first is already read. Throws a GatewayError if the stream breaks. */
  events: AsyncIterable<ChatEvent>;
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

/**
 * Reads the first event before returning, so errors that come before any content (an error line, garbage, an
 * early close) are still failures of this server, and the next one can be tried.
 */
export async function startEvents(
  source: AsyncGenerator<ChatEvent>,
  model: () => string,
  abort: () => void,
  finish: () => void = () => {},
): Promise<EventStream> {
  let first: IteratorResult<ChatEvent>;
  try {
    first = await source.next();
  } catch (error) {
    abort();
    throw error;
  }
  async function* all(): AsyncGenerator<ChatEvent> {
    if (first.done) return;
    yield first.value;
    yield* source;
  }
  return { events: all(), model: model(), abort, finish };
}

/** Turns a backend's framed payloads (NDJSON lines, SSE data) into events; `seen.model` records the model name. */
export type Decoder = (
  payloads: AsyncIterable<string>,
  seen: { model?: string },
) => AsyncGenerator<ChatEvent>;

export interface StreamLimits {
  /** Longest silence between two reads. */
  idleMs: number;
  /** Most bytes one payload may span; a server sending an endless line must not fill the gateway's memory. */
  maxEventBytes: number;
}

export function streamLimits(ctx: CallContext): StreamLimits {
  return { idleMs: ctx.idleTimeoutMs, maxEventBytes: ctx.maxAnswerBytes };
}

/**
 * Reads an open streamed response: framing, decoding, idle timeout, and a single `stop` that closes the backend
 * connection whether the stream ends, breaks, or the client leaves.
 */
export async function readEventStream(
  open: OpenResponse,
  framing: Framing,
  decode: Decoder,
  model: string,
  { idleMs, maxEventBytes }: StreamLimits,
): Promise<EventStream> {
  const stop = () => {
    open.abort.abort();
    open.release();
  };
  const reader = open.answer.chunks();
  let complete = false;
  // The idle timeout watches the reads themselves: silence is no bytes at all, however they are framed.
  const reads = withIdleTimeout(
    { next: () => reader.read() },
    idleMs,
    stop,
  );
  async function* payloads(): AsyncGenerator<string> {
    const text = new TextDecoder();
    // Bytes read since a payload last completed. Reset to zero when one does, so a payload can overrun the
    // bound by at most one read; a backend read is far smaller than the bound.
    let unframed = 0;
    for await (const bytes of reads) {
      const done = framing.push(text.decode(bytes, { stream: true }));
      unframed = done.length ? 0 : unframed + bytes.byteLength;
      if (unframed > maxEventBytes) {
        throw new BadGateway(`The model server sent a stream event larger than ${maxEventBytes} bytes`);
      }
      yield* done;
    }
    yield* framing.push(text.decode());
    yield* framing.end();
  }
  const seen: { model?: string } = {};
  async function* guarded(): AsyncGenerator<ChatEvent> {
    try {
      yield* decode(payloads(), seen);
    } catch (error) {
      if (error instanceof GatewayError) throw error;
      throw new BackendFailure("the model server's stream broke off", true, true);
    } finally {
      if (complete) void readToEnd(reader, open, stop);
      else stop();
    }
  }
  return await startEvents(guarded(), () => seen.model ?? model, stop, () => complete = true);
}

/** What a complete answer's body may still hold after its last event: its end, and little else. */
const END_BYTES = 64 * 1024;
const END_MS = 1_000;

/**
 * Reads what follows a complete answer's last event (typically only the end of the chunked body), so the
 * runtime can put the backend connection back in its pool; a backend that sends more, or does not end its
 * body soon, is cut off instead. Either way the response is released here, not left to a timer.
 */
async function readToEnd(
  reader: ChunkReader,
  open: OpenResponse,
  stop: () => void,
) {
  const timer = setTimeout(stop, END_MS);
  try {
    let left = END_BYTES;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      left -= value.byteLength;
      if (left < 0) return stop();
    }
  } catch {
    // Cut off by the bound or by the backend: nothing is owed to the client any more.
  } finally {
    clearTimeout(timer);
    open.release();
  }
}
