/**
 * @module The runtime's entry that serves HTTP on one accepted connection, `serveHttpOnConnection` on
 * `Deno[Deno.internal]`: the same hyper-based engine as `Deno.serve`, reached for a connection the gateway's
 * own listener accepted (`listener.ts`). Deno 2 has no public API for it; `tests/runtime_canary_test.ts`
 * fails loudly if an upgrade takes it away.
 */

export type ServeOnConnection = (
  conn: Deno.Conn,
  signal: AbortSignal,
  handler: (request: Request, info: Deno.ServeHandlerInfo) => Response | Promise<Response>,
  onError: (error: unknown) => Response,
  onListen: () => void,
) => { finished: Promise<void> };

/** The entry, or undefined on a runtime without it (the listener then falls back to `Deno.serve`). */
export function serveOnConnection(): ServeOnConnection | undefined {
  const internals = (Deno as unknown as Record<symbol, Record<string, unknown> | undefined>)[
    (Deno as unknown as { internal: symbol }).internal
  ];
  const serve = internals?.serveHttpOnConnection;
  return typeof serve === "function" ? serve as ServeOnConnection : undefined;
}
