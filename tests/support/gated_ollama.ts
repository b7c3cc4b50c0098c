/**
 * An Ollama-like backend whose answers wait at a gate: a streamed answer sends its first words at once and
 * the rest only after `open()`, one every `delayMs`, so a test can hold many streams mid-answer, do
 * something to the gateway, and then let them run. With `endless` the rest never ends (until the client
 * goes), for a stream longer than any grace period. Token counts are fixed, so a test knows what each
 * complete answer bills.
 */
import { LoopbackServer } from "../fakes/loopback_server.ts";

export const PROMPT_TOKENS = 7;

const word = (i: number) => `w${i} `;

export interface GatedOptions {
  /** Words in a complete answer (its completion tokens). */
  words?: number;
  /** Words sent before the gate. */
  before?: number;
  delayMs?: number;
  endless?: boolean;
  /** A non-streamed answer never comes (until the gateway gives up on it). */
  wholeHangs?: boolean;
}

/** Longest an endless answer runs, so a forgotten stream cannot outlive its test by much. */
const ENDLESS_LIMIT = 3_000;

export class GatedOllama {
  readonly #net = new LoopbackServer((req) => this.#route(req));
  readonly #gate = Promise.withResolvers<void>();
  readonly words: number;
  readonly #before: number;
  readonly #delayMs: number;
  readonly #endless: boolean;
  readonly #wholeHangs: boolean;
  /** Answers (streamed or not) waiting at the gate. */
  waiting = 0;
  /** Whether a chat came: the model is loaded from then on. */
  #asked = false;
  /** Streamed answers sent to their final line. */
  completed = 0;
  /** Streamed answers whose client (the gateway) closed them first. */
  cancelled = 0;

  constructor(options: GatedOptions = {}) {
    this.words = options.words ?? 12;
    this.#before = options.before ?? 2;
    this.#delayMs = options.delayMs ?? 20;
    this.#endless = options.endless ?? false;
    this.#wholeHangs = options.wholeHangs ?? false;
  }

  get url(): string {
    return this.#net.url;
  }

  /** A complete answer's text: every word, as the stream sends them. */
  get answer(): string {
    return Array.from({ length: this.words }, (_, i) => word(i)).join("");
  }

  open(): void {
    this.#gate.resolve();
  }

  close(): Promise<void> {
    this.open();
    return this.#net.close();
  }

  async #route(req: Request): Promise<Response> {
    const path = new URL(req.url).pathname;
    if (path === "/api/version") return Response.json({ version: "0.33.0" });
    if (path === "/api/tags") return Response.json({ models: [{ name: "m1", model: "m1" }] });
    // As Ollama: nothing loaded until a model is asked for, then it stays.
    if (path === "/api/ps") {
      return Response.json({
        models: this.#asked ? [{ name: "m1", model: "m1", size_vram: 2_000_000_000 }] : [],
      });
    }
    if (path !== "/api/chat") return Response.json({ error: "not found" }, { status: 404 });
    const body = await req.json();
    this.#asked = true;
    if (body.stream !== false) return this.#stream(body.model);
    this.waiting++;
    if (this.#wholeHangs) return this.#net.hang(req.signal);
    await this.#gate.promise;
    this.waiting--;
    return Response.json({
      ...this.#final(body.model),
      message: { role: "assistant", content: this.#text() },
    });
  }

  #text(): string {
    return Array.from({ length: this.words }, (_, i) => `w${i}`).join(" ");
  }

  #final(model: string) {
    return {
      model,
      created_at: new Date().toISOString(),
      message: { role: "assistant", content: "" },
      done: true,
      done_reason: "stop",
      total_duration: 1_000_000,
      prompt_eval_count: PROMPT_TOKENS,
      eval_count: this.words,
    };
  }

  #stream(model: string): Response {
    const encoder = new TextEncoder();
    const line = (payload: unknown) => encoder.encode(JSON.stringify(payload) + "\n");
    const piece = (i: number) =>
      line({
        model,
        created_at: new Date().toISOString(),
        message: { role: "assistant", content: word(i) },
        done: false,
      });
    let sent = 0;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const stream = new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        if (sent === this.#before) {
          this.waiting++;
          await this.#gate.promise;
          this.waiting--;
        }
        if (sent >= this.#before) await new Promise((resolve) => timer = setTimeout(resolve, this.#delayMs));
        const limit = this.#endless ? ENDLESS_LIMIT : this.words;
        if (sent < limit) return controller.enqueue(piece(sent++));
        controller.enqueue(line(this.#final(model)));
        this.completed++;
        controller.close();
      },
      cancel: () => {
        clearTimeout(timer);
        this.cancelled++;
      },
    }, { highWaterMark: 0 });
    return new Response(stream, { headers: { "Content-Type": "application/x-ndjson" } });
  }
}
