/**
 * @module Serving: listens, hands the peer address to the app, and on SIGINT/SIGTERM stops accepting and lets
 * running requests finish before the process exits.
 */
import type { Config } from "../config.ts";
import type { ConnectionEnv } from "./app.ts";

interface FetchApp {
  fetch(request: Request, env: ConnectionEnv): Response | Promise<Response>;
}

export function serve(app: FetchApp, config: Config, onStop: () => Promise<void> | void): Deno.HttpServer {
  const server = Deno.serve({
    port: config.port,
    hostname: config.host,
    onListen: ({ hostname, port }) => console.log(`gateway listening on http://${hostname}:${port}`),
  }, (request, info) => app.fetch(request, { remoteAddr: info.remoteAddr }));

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await server.shutdown();
    await onStop();
    Deno.exit(0);
  };
  for (const signal of ["SIGINT", "SIGTERM"] as const) Deno.addSignalListener(signal, stop);
  return server;
}
