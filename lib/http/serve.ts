/**
 * @module Serving: listens, hands the peer address to the app, and on SIGINT/SIGTERM stops listening, lets
 * running requests and streams finish within the shutdown grace period, ends what still runs, and only then
 * lets `onStop` write what is pending. A second signal skips the rest of the grace period.
 */
import type { Config } from "../config.ts";
import type { ConnectionEnv } from "./app.ts";
import { Drain } from "./drain.ts";

interface FetchApp {
  fetch(request: Request, env: ConnectionEnv): Response | Promise<Response>;
}

const SIGNALS = ["SIGINT", "SIGTERM"] as const;

export function serve(app: FetchApp, config: Config, onStop: () => Promise<void> | void): Deno.HttpServer {
  const drain = new Drain({ graceMs: config.shutdownGraceMs });
  const server = Deno.serve(
    {
      port: config.port,
      hostname: config.host,
      onListen: ({ hostname, port }) => console.log(`gateway listening on http://${hostname}:${port}`),
    },
    (request, info) =>
      drain.handle(
        request,
        info.completed,
        (signal) => app.fetch(request, { remoteAddr: info.remoteAddr, signal }),
      ),
  );

  const stop = async () => {
    if (drain.stopping) return drain.hurry();
    // Closes the listener now; its promise, which waits for every connection without a bound, is not awaited.
    server.shutdown().catch(() => {});
    await drain.stop();
    let code = 0;
    try {
      await onStop();
    } catch (error) {
      // Exiting 0 would tell a supervisor that nothing was lost.
      console.error("gateway: writing pending usage at shutdown failed:", error);
      code = 1;
    }
    Deno.exit(code);
  };
  for (const signal of SIGNALS) Deno.addSignalListener(signal, () => void stop());
  return server;
}
