/**
 * @module A streamed answer as an HTTP response. The body is pulled: the next backend event is read only when
 * the client has taken the previous one, so a slow client slows the backend instead of filling memory. A client
 * that leaves aborts the backend call at once; one that stops taking bytes (the socket's buffers full, so the
 * runtime stops pulling) for the stall timeout is cut off the same way, so it holds no server slot. After the
 * first byte an error can no longer change the status, so it ends the stream in the face's own error form; a
 * gateway that stops ends its open streams the same way.
 */
import type { ChatEvent } from "../chat/types.ts";
import { BackendFailure, ClientStalled, GatewayError } from "../errors.ts";
import type { StreamRenderer } from "../faces/mod.ts";
import type { EventStream } from "../backends/stream_reading.ts";
import { clearDeadline, type Deadline, deadline } from "../runtime/deadlines.ts";
import { responseWith } from "./respond.ts";

import type { StreamEnd } from "../chat/stream_end.ts";

export type { StreamEnd };

function deltaChars(event: ChatEvent): number {
  if (event.type !== "delta") return 0;
  let n = (event.content?.length ?? 0) + (event.thinking?.length ?? 0);
  for (const call of event.toolCalls ?? []) n += call.name.length + JSON.stringify(call.arguments).length;
  return n;
}

/**
 * The streams this isolate is sending. A stopping gateway ends those still open at the end of its grace
 * period, and any opened after that at once, so each is recorded (partial, like a broken stream) before the
 * ledger's last flush instead of vanishing with the process.
 */
export class OpenStreams {
  readonly #ends = new Set<(error: GatewayError) => void>();
  #stopped?: GatewayError;

  get size(): number {
    return this.#ends.size;
  }

  /** Ends every open stream with `error`, and from now on every new one as it opens; returns how many. */
  endAll(error: GatewayError): number {
    this.#stopped = error;
    const ends = [...this.#ends];
    for (const end of ends) end(error);
    return ends.length;
  }

  /** Registers a stream's way to end; returns its removal. */
  add(end: (error: GatewayError) => void): () => void {
    if (this.#stopped) {
      end(this.#stopped);
      return () => {};
    }
    this.#ends.add(end);
    return () => this.#ends.delete(end);
  }
}

/** What a stream's answer sent whole says beyond its type: no caching. */
const COMPLETE_HEADERS = { "Cache-Control": "no-cache" };
/**
 * What a stream still coming says besides: no buffering by a proxy in front. An answer that goes out whole,
 * with its length, has nothing to hold back, and each header costs a response about a microsecond to send.
 */
const INCREMENTAL_HEADERS = { ...COMPLETE_HEADERS, "X-Accel-Buffering": "no" };

/** Every stream of this isolate, unless a caller keeps its own set. */
export const openStreams = new OpenStreams();

/** The configuration's default (`GATEWAY_CLIENT_STALL_TIMEOUT_MS`). */
const STALL_MS = 30_000;

/** Bytes of a chunk; one encoder for every stream. */
const encoder = new TextEncoder();

/**
 * Unwinds the backend side however the stream ended (its reader, idle timer and connection are let go now, not
 * when a timer that still points at them fires), then hands the stream's end to its owner.
 */
function endStream(stream: EventStream, end: StreamEnd, onEnd: (end: StreamEnd) => void): void {
  const events = stream.events;
  if (events.close) events.close();
  else events.return?.().catch(() => {});
  onEnd(end);
}

/** An event's text, counted; the answer's end is noted, and the backend's body is then read to its end. */
function render(renderer: StreamRenderer, stream: EventStream, end: StreamEnd, event: ChatEvent): string {
  end.deliveredChars += deltaChars(event);
  if (event.type === "done") {
    end.done = event;
    stream.finish();
  }
  return renderer.event(event);
}

export function streamResponse(
  renderer: StreamRenderer,
  stream: EventStream,
  onEnd: (end: StreamEnd) => void,
  streams: OpenStreams = openStreams,
  /** How long the client may take nothing while the answer has more before the stream is cut. */
  stallMs: number = STALL_MS,
  /** More headers for the response (the route taken, the rate-limit state). */
  ...headers: Record<string, string>[]
): Response {
  const events = stream.events;
  const end: StreamEnd = { clientLeft: false, deliveredChars: 0 };
  const respond = (body: BodyInit, kind: Record<string, string>) =>
    responseWith(body, 200, { "Content-Type": renderer.contentType }, kind, ...headers);

  // What the backend's first reads brought goes out in the first write; an answer already complete goes out
  // whole, as a body of known length, without the stream machinery (made only past this loop): a short
  // answer from a fast server costs no more than a whole one.
  let ready = "";
  for (let event = events.take?.(); event !== undefined; event = events.take?.()) {
    ready += render(renderer, stream, end, event);
    if (end.done) {
      end.firstByteAt = performance.now();
      endStream(stream, end, onEnd);
      return respond(ready, COMPLETE_HEADERS);
    }
  }
  return respond(pulledBody(renderer, stream, onEnd, streams, stallMs, end, ready), INCREMENTAL_HEADERS);
}

/** The body of an answer still coming, pulled as the client takes it; `ready` is what came already. */
function pulledBody(
  renderer: StreamRenderer,
  stream: EventStream,
  onEnd: (end: StreamEnd) => void,
  streams: OpenStreams,
  stallMs: number,
  end: StreamEnd,
  ready: string,
): ReadableStream<Uint8Array> {
  const events = stream.events;
  let ended = false;
  let forget = () => {};
  // Since when the stream has waited for the client to take its last chunk; undefined while it waits for the
  // backend instead, which the backend's idle timeout bounds.
  let waitingSince: number | undefined;
  // One deadline at a time per stream, armed when a wait begins and none is armed; when it fires during a
  // wait that began later, it is armed again for the rest. A deadline per chunk would cost every chunk.
  let stallWatch: Deadline | undefined;
  let cut = (_error: GatewayError) => {};
  const checkStall = () => {
    stallWatch = undefined;
    if (ended || waitingSince === undefined) return;
    const waited = performance.now() - waitingSince;
    if (waited < stallMs) stallWatch = deadline(stallMs - waited, checkStall);
    else cut(new ClientStalled(stallMs));
  };
  const waitForClient = () => {
    waitingSince = performance.now();
    stallWatch ??= deadline(stallMs, checkStall);
  };
  const finish = () => {
    if (ended) return;
    ended = true;
    clearDeadline(stallWatch);
    forget();
    endStream(stream, end, onEnd);
  };
  const send = (controller: ReadableStreamDefaultController<Uint8Array>, text: string) => {
    end.firstByteAt ??= performance.now();
    controller.enqueue(encoder.encode(text));
  };

  return new ReadableStream<Uint8Array>({
    start(controller) {
      // The client takes nothing, so an error form sent now would never arrive: the body is errored, which
      // makes the runtime close the connection, and the rest is as when a client leaves.
      cut = (error) => {
        end.error = error;
        stream.abort();
        controller.error(error);
        finish();
      };
      forget = streams.add((error) => {
        if (ended) return;
        end.error = error;
        stream.abort();
        send(controller, renderer.error(error));
        controller.close();
        finish();
      });
    },
    async pull(controller) {
      waitingSince = undefined;
      // Events that came in one backend read go out in one chunk: one write instead of one per event.
      let out = ready;
      ready = "";
      try {
        for (;;) {
          let event = events.take?.();
          if (event === undefined) {
            if (out) {
              send(controller, out);
              return waitForClient();
            }
            const next = await events.next();
            // Ended by the gateway while this read waited: the event was never delivered.
            if (ended) return;
            if (next.done) throw new BackendFailure("the model server's stream ended early", false, true);
            event = next.value;
          }
          const text = render(renderer, stream, end, event);
          if (end.done) {
            send(controller, out + text);
            controller.close();
            return finish();
          }
          out += text;
        }
      } catch (error) {
        if (ended) return;
        end.error = error instanceof GatewayError
          ? error
          : new BackendFailure("the model server's stream broke off", false, true);
        stream.abort();
        send(controller, out + renderer.error(end.error));
        controller.close();
        finish();
      }
    },
    cancel() {
      end.clientLeft = true;
      stream.abort();
      finish();
    },
  });
}
