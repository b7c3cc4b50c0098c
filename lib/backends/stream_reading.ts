/**
 * @module Reading a backend's streamed body: lines out of bytes, a bounded wait between chunks, and the first
 * event read before the stream is handed on, so a backend that fails at once still fails over.
 */
import { EventSourceParserStream } from "eventsource-parser/stream";
import { BackendFailure, BadGateway, GatewayError } from "../errors.ts";
import type { OpenResponse } from "./http_call.ts";
import type { ChatEvent } from "../chat/types.ts";

/** Splits a text stream into lines (LF or CRLF); a last line without a newline is still delivered. */
export function lineSplitter(): TransformStream<string, string> {
  let rest = "";
  return new TransformStream({
    transform(chunk, controller) {
      const parts = (rest + chunk).split("\n");
      rest = parts.pop()!;
      for (const line of parts) controller.enqueue(line.endsWith("\r") ? line.slice(0, -1) : line);
    },
    flush(controller) {
      if (rest) controller.enqueue(rest);
    },
  });
}

/** Yields from `source`, failing when a chunk takes longer than `idleMs` to arrive. */
export async function* withIdleTimeout<T>(source: AsyncIterator<T>, idleMs: number, onTimeout: () => void) {
  for (;;) {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        onTimeout();
        reject(new BackendFailure(`model server sent nothing for ${idleMs} ms`, true, true, 504));
      }, idleMs);
    });
    try {
      const next = await Promise.race([source.next(), timeout]);
      if (next.done) return;
      yield next.value;
    } finally {
      clearTimeout(timer);
    }
  }
}

export interface EventStream {
  /** The answer's events; the first is already read. Throws a GatewayError if the stream breaks. */
  events: AsyncIterable<ChatEvent>;
  /** Model name as the backend reported it. */
  model: string;
  /** Stops the backend's work at once (closes the connection). */
  abort(): void;
}

/**
 * Reads the first event before returning, so errors that come before any content (an error line, garbage, an
 * early close) are still failures of this server, and the next one can be tried.
 */
export async function startEvents(
  source: AsyncGenerator<ChatEvent>,
  model: () => string,
  abort: () => void,
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
  return { events: all(), model: model(), abort };
}

/** Turns a backend's framed payloads (NDJSON lines, SSE data) into events; `seen.model` records the model name. */
export type Decoder = (
  payloads: AsyncIterable<string>,
  seen: { model?: string },
) => AsyncGenerator<ChatEvent>;

/**
 * Reads an open streamed response: framing, decoding, idle timeout, and a single `stop` that closes the backend
 * connection whether the stream ends, breaks, or the client leaves.
 */
export async function readEventStream(
  open: OpenResponse,
  framing: TransformStream<string, string>,
  decode: Decoder,
  model: string,
  idleMs: number,
): Promise<EventStream> {
  const stop = () => {
    open.abort.abort();
    open.release();
  };
  if (!open.response.body) {
    stop();
    throw new BadGateway("The model server answered with an empty stream");
  }
  const payloads = open.response.body.pipeThrough(new TextDecoderStream()).pipeThrough(framing);
  const source = withIdleTimeout(payloads[Symbol.asyncIterator](), idleMs, stop);
  const seen: { model?: string } = {};
  async function* guarded(): AsyncGenerator<ChatEvent> {
    try {
      yield* decode({ [Symbol.asyncIterator]: () => source }, seen);
    } catch (error) {
      if (error instanceof GatewayError) throw error;
      throw new BackendFailure("the model server's stream broke off", true, true);
    } finally {
      stop();
    }
  }
  return await startEvents(guarded(), () => seen.model ?? model, stop);
}

/** SSE framing: each event's data, as a TransformStream of strings. */
export function sseData(): TransformStream<string, string> {
  const parser = new EventSourceParserStream();
  const data = new TransformStream<{ data: string }, string>({
    transform: (event, controller) => controller.enqueue(event.data),
  });
  parser.readable.pipeTo(data.writable).catch(() => {});
  return { writable: parser.writable, readable: data.readable } as TransformStream<string, string>;
}
