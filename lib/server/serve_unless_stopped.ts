/**
 * @module Between an entry's warm-up and its serving. A signal during the warm-up stops the gateway at once, and
 * its stop closes the listeners it has: none yet. Left to go on, the worker would then open its listener
 * (`start:parallel`), or finish evaluating and be served by the runtime (`deno serve`), after its stop: a port
 * that accepts requests no one drains, which also keeps the other workers' clients from seeing it close. So a
 * stopped gateway never goes on to serve; its process ends once every worker has stopped
 * (lib/server/worker_shutdown.ts), which a worker that serves nothing never holds up.
 */

export interface MayServe {
  /** Whether the gateway was told to stop. */
  readonly stopping: boolean;
}

/** Settles at once for a gateway still running; never for one stopped. */
export function unlessStopped(gateway: MayServe): Promise<void> {
  if (!gateway.stopping) return Promise.resolve();
  // A timer keeps the worker's event loop alive: an empty one would end a top-level await with an error.
  return new Promise(() => setInterval(() => {}, 1 << 30));
}
