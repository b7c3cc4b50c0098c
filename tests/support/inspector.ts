/**
 * A child process's V8 inspector, for what only the process itself can tell: its JS heap after a full
 * collection. The process must run with `--inspect=127.0.0.1:0`; its address is read from what it printed.
 */
export class Inspector {
  #nextId = 1;
  readonly #pending = new Map<number, (result: Record<string, unknown>) => void>();

  private constructor(private readonly socket: WebSocket) {
    socket.onmessage = (event) => {
      const message = JSON.parse(event.data);
      this.#pending.get(message.id)?.(message.result ?? {});
      this.#pending.delete(message.id);
    };
  }

  static async connect(output: string): Promise<Inspector> {
    const url = /Debugger listening on (ws:\/\/\S+)/.exec(output)?.[1];
    if (!url) throw new Error(`the process has no inspector: ${output}`);
    const socket = new WebSocket(url);
    await new Promise((resolve, reject) => {
      socket.onopen = resolve;
      socket.onerror = reject;
    });
    return new Inspector(socket);
  }

  call(method: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    const id = this.#nextId++;
    const { promise, resolve } = Promise.withResolvers<Record<string, unknown>>();
    this.#pending.set(id, resolve);
    this.socket.send(JSON.stringify({ id, method, params }));
    return promise;
  }

  /** Bytes of JS heap in use after full collections (twice: the first may only queue finalizers). */
  async heapAfterGc(): Promise<number> {
    await this.call("HeapProfiler.collectGarbage");
    await this.call("HeapProfiler.collectGarbage");
    const { usedSize } = await this.call("Runtime.getHeapUsage");
    return usedSize as number;
  }

  close(): void {
    this.socket.close();
  }
}
