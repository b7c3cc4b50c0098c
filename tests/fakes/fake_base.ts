/**
 * What the fake backends share beyond their wire format: the scripting and counters of FakeBackend, the
 * record of requests, the loopback server they listen on, slots with a FIFO and a time to first byte, the fault
 * modes that answer alike in any format, and the rules of a streamed answer (chunk delay, where a stream fault
 * strikes, what counts as sent, completed or cancelled). Kept in one place so that `streamFault.after` or `streamsCancelled` cannot come to mean one
 * thing for one fake and another for the other; each fake only says how its server puts things on the wire.
 */
import type { FakeMode, ReceivedChat, ScriptedBody, ScriptedReply, StreamFault } from "./fake_backend.ts";
import { LoopbackServer } from "./loopback_server.ts";
import { pause } from "./abortable_pause.ts";
import { pieces, type StreamPlan, words } from "./stream_text.ts";
export { pieces, type StreamPlan, words };

type Json = Record<string, unknown>;

const FLOOD_PIECE = new TextEncoder().encode("a".repeat(64 * 1024));

/**
 * None by default. A warm server's few ms would be truer, but many tests send hundreds of chats one after
 * another: 3 ms made the in-process tests half as slow again (65 s to 104 s), 1 ms 40 % slower, and the
 * benches that use a fake as their fast backend would measure it. A test that needs the pause sets it.
 */
export const DEFAULT_FIRST_BYTE_MS = 0;

export abstract class FakeBackendBase implements AsyncDisposable {
  mode: FakeMode = "ok";
  /** Answer for each chat; defaults to a greeting naming this server. */
  reply: (body: Json) => ScriptedReply = () => ({ content: `Hello from ${this.name}` });
  readonly received: ReceivedChat[] = [];
  /** Breaks streamed answers, when set. */
  streamFault?: StreamFault;
  /** What mode "scripted" answers. */
  scripted?: ScriptedBody;
  /** Pause before each streamed chunk, ms. */
  chunkDelayMs = 0;
  /** Streamed answers whose connection the client closed before the end. */
  streamsCancelled = 0;
  /** Streamed answers sent to the end. */
  streamsCompleted = 0;
  /** Bytes sent by "flood" answers and "endless" faults, over all of them. */
  floodBytesSent = 0;
  /** Answer chunks handed to the connection so far, over all streams; framing is not counted. */
  chunksSent = 0;
  /** The models the server lists as carried. */
  models: string[] = ["m1"];
  /** Breaks the endpoints a health probe asks: "hang" never answers, "error" answers 500. */
  probeFault?: "hang" | "error";
  /** Requests received per path, chat and probes alike. */
  readonly hits = new Map<string, number>();
  /**
   * Chats run at once; the rest wait in arrival order, as OLLAMA_NUM_PARALLEL and vLLM's --max-num-seqs make
   * them. Unset: no limit.
   */
  slots?: number;
  /** Pause before a chat's answer begins, once it has a slot, ms: the server's own time to first byte. */
  firstByteDelayMs = DEFAULT_FIRST_BYTE_MS;
  /** Most chats ever running at once, and most ever held (running and waiting for a slot). */
  peakRunning = 0;
  peakHeld = 0;
  #running = 0;
  readonly #waiting: (() => void)[] = [];
  readonly #net = new LoopbackServer((req) => this.#route(req));
  readonly #chatPath: string;

  protected constructor(readonly name: string, chatPath: string) {
    this.#chatPath = chatPath;
  }

  get url(): string {
    return this.#net.url;
  }

  get paused(): boolean {
    return this.#net.paused;
  }

  /** Chats being answered now: from their slot until their answer's last byte is taken or the client left. */
  get running(): number {
    return this.#running;
  }

  /** Chats waiting for a slot. */
  get waiting(): number {
    return this.#waiting.length;
  }

  get chats(): ReceivedChat[] {
    return this.received.filter((r) => r.path === this.#chatPath);
  }

  /** The body of the most recent chat request. */
  get last(): Json {
    const chats = this.chats;
    if (!chats.length) throw new Error(`${this.name} received no chat request`);
    return chats[chats.length - 1].body;
  }

  close(): Promise<void> {
    return this.#net.close();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /** Stops listening: connections are refused until `resume()`. Hanging answers are let go first. */
  pause(): Promise<void> {
    return this.#net.pause();
  }

  /** Listens again on the same port, so the URL the gateway knows works again. */
  resume(): void {
    this.#net.resume();
  }

  /** Answers a request whose hit is already counted. */
  protected abstract handle(path: string, req: Request): Response | Promise<Response>;

  protected record(path: string, req: Request, body: Json): void {
    this.received.push({ path, headers: req.headers, body });
  }

  protected hang(signal: AbortSignal): Promise<Response> {
    return this.#net.hang(signal);
  }

  /**
   * Answers one chat as a server with slots does: waits for a free slot (499 if the client leaves first),
   * pauses `firstByteDelayMs`, then answers, holding the slot until the answer's last byte is taken or the
   * client leaves; `released` is called then.
   */
  protected async inSlot(
    signal: AbortSignal,
    answer: () => Response | Promise<Response>,
    released?: () => void,
  ): Promise<Response> {
    if (!await this.#slot(signal)) return new Response(null, { status: 499 });
    let done = false;
    const release = () => {
      if (done) return;
      done = true;
      this.#running--;
      this.#waiting.shift()?.();
      released?.();
    };
    try {
      if (this.firstByteDelayMs > 0 && !await pause(this.firstByteDelayMs, signal)) {
        release();
        return new Response(null, { status: 499 });
      }
      const res = await answer();
      if (!res.body || !res.ok) {
        release();
        return res;
      }
      const reader = res.body.getReader();
      const held = new ReadableStream<Uint8Array>({
        pull: async (controller) => {
          const { done, value } = await reader.read().catch((error) => {
            release();
            throw error;
          });
          if (done) {
            release();
            controller.close();
          } else controller.enqueue(value);
        },
        cancel: (reason) => {
          release();
          return reader.cancel(reason);
        },
      }, { highWaterMark: 0 });
      return new Response(held, { status: res.status, headers: res.headers });
    } catch (error) {
      release();
      throw error;
    }
  }

  /** Waits for a free slot (or none, without a limit); false when the client left while waiting. */
  #slot(signal: AbortSignal): Promise<boolean> {
    this.peakHeld = Math.max(this.peakHeld, this.#running + this.#waiting.length + 1);
    if (this.slots === undefined || (this.#running < this.slots && !this.#waiting.length)) {
      this.#took();
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const go = () => {
        signal.removeEventListener("abort", leave);
        this.#took();
        resolve(true);
      };
      const leave = () => {
        const i = this.#waiting.indexOf(go);
        if (i >= 0) this.#waiting.splice(i, 1);
        resolve(false);
      };
      signal.addEventListener("abort", leave, { once: true });
      this.#waiting.push(go);
    });
  }

  #took(): void {
    this.#running++;
    this.peakRunning = Math.max(this.peakRunning, this.#running);
  }

  /** The answer of a fault mode that looks the same in every wire format; undefined for the other modes. */
  protected formatFreeFault(signal: AbortSignal): Response | Promise<Response> | undefined {
    switch (this.mode) {
      case "garbage":
        return new Response("<html>oops</html>", { headers: { "Content-Type": "text/html" } });
      case "malformed":
        return Response.json({ unexpected: true });
      case "hang":
        return this.hang(signal);
      case "scripted":
        return this.#scriptedAnswer();
      case "flood":
        return new Response(
          new ReadableStream<Uint8Array>({
            pull: (controller) => controller.enqueue(this.#floodPiece()),
            cancel: () => void this.streamsCancelled++,
          }, { highWaterMark: 0 }),
          { headers: { "Content-Type": "application/json" } },
        );
    }
    return undefined;
  }

  #scriptedAnswer(): Response {
    const script = this.scripted;
    if (!script) throw new Error(`${this.name}: mode "scripted" without a script`);
    const encoder = new TextEncoder();
    let next = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (next === script.pieces.length) return controller.close();
        const piece = script.pieces[next++];
        controller.enqueue(typeof piece === "string" ? encoder.encode(piece) : piece.slice());
      },
      cancel: () => void this.streamsCancelled++,
    }, { highWaterMark: 0 });
    return new Response(body, { headers: { "Content-Type": script.contentType } });
  }

  /** 64 KiB of one payload that never ends; sent only as fast as the client reads. */
  #floodPiece(): Uint8Array {
    this.floodBytesSent += FLOOD_PIECE.byteLength;
    return FLOOD_PIECE.slice();
  }

  /** Sends a planned answer one piece per read, so delays, faults and cancels land between chunks. */
  protected streamed(plan: StreamPlan): Response {
    const fault = this.streamFault;
    const encoder = new TextEncoder();
    let opening = plan.opening;
    let sent = 0;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const delay = () => new Promise((resolve) => timer = setTimeout(resolve, this.chunkDelayMs));
    const stream = new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        const send = (text: string) => controller.enqueue(encoder.encode(text));
        if (this.chunkDelayMs) await delay();
        if (opening !== undefined) {
          send(opening);
          opening = undefined;
          return;
        }
        if (fault && sent === fault.after) {
          if (fault.kind === "crash") return controller.error(new Error("backend crashed"));
          if (fault.kind === "garbage" || fault.kind === "error-line") plan.faults[fault.kind].forEach(send);
          if (fault.kind === "stall") await this.#net.stall();
          if (fault.kind === "endless") return controller.enqueue(this.#floodPiece());
          return controller.close();
        }
        if (sent < plan.chunks.length) {
          send(plan.chunks[sent++]);
          this.chunksSent++;
          return;
        }
        plan.closing.forEach(send);
        this.streamsCompleted++;
        controller.close();
      },
      cancel: () => {
        clearTimeout(timer);
        this.streamsCancelled++;
      },
    }, { highWaterMark: 0 });
    return new Response(stream, { headers: { "Content-Type": plan.contentType } });
  }

  #route(req: Request): Response | Promise<Response> {
    const path = new URL(req.url).pathname;
    this.hits.set(path, (this.hits.get(path) ?? 0) + 1);
    return this.handle(path, req);
  }
}
