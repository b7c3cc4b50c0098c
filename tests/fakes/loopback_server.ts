/**
 * The listening part every fake backend shares: a real HTTP server on 127.0.0.1 that can stop listening and
 * listen again on the same port (so the URL the gateway knows stays valid), and answers that hang until the
 * test lets them go.
 */
export class LoopbackServer {
  #server: Deno.HttpServer<Deno.NetAddr>;
  readonly #port: number;
  #paused = false;
  readonly #hanging = new Set<() => void>();

  constructor(private readonly handler: (request: Request) => Response | Promise<Response>) {
    this.#server = this.#listen(0);
    this.#port = this.#server.addr.port;
  }

  #listen(port: number): Deno.HttpServer<Deno.NetAddr> {
    // A fault that breaks an answer on purpose is not worth a stack trace in the test output.
    const onError = () => new Response(null, { status: 500 });
    return Deno.serve({ hostname: "127.0.0.1", port, onListen: () => {}, onError }, this.handler);
  }

  get url(): string {
    return `http://127.0.0.1:${this.#port}`;
  }

  get paused(): boolean {
    return this.#paused;
  }

  /** An answer that never comes, until the client gives up or the server pauses or closes. */
  hang(signal: AbortSignal): Promise<Response> {
    return new Promise((resolve) => {
      const release = () => resolve(new Response("", { status: 599 }));
      this.#hanging.add(release);
      signal.addEventListener("abort", release);
    });
  }

  /** A pause inside an answer (a stalled stream) that ends when the server pauses or closes. */
  stall(): Promise<void> {
    return new Promise<void>((release) => this.#hanging.add(release));
  }

  async close(): Promise<void> {
    this.#release();
    if (!this.#paused) await this.#server.shutdown();
  }

  /** Stops listening: connections are refused until `resume()`. Hanging answers are let go first. */
  async pause(): Promise<void> {
    if (this.#paused) return;
    this.#paused = true;
    this.#release();
    await this.#server.shutdown();
  }

  resume(): void {
    if (!this.#paused) return;
    this.#server = this.#listen(this.#port);
    this.#paused = false;
  }

  #release(): void {
    for (const release of this.#hanging) release();
    this.#hanging.clear();
  }
}
