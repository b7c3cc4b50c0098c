/**
 * @module Serving: listens (on the gateway's own listener, which bounds connections in number and in time),
 * hands the peer address to the app, and on SIGINT/SIGTERM stops listening, lets running requests and streams
 * finish within the shutdown grace period, ends what still runs, and only then lets `onStop` write what is
 * pending. A second signal skips the rest of the grace period.
 */
import type { Config } from "../config.ts";
import type { ConnectionEnv } from "./app.ts";
import { Drain } from "./drain.ts";
import { type ConnectionInfo, DEFAULT_MAX_CONNECTIONS, listen, type Listening } from "./listener.ts";

interface FetchApp {
  fetch(request: Request, env: ConnectionEnv): Response | Promise<Response>;
}

const SIGNALS = ["SIGINT", "SIGTERM"] as const;

/** The gateway's listener, every request going through `drain`; `reusePort` lets workers share one port. */
export function listenForGateway(app: FetchApp, config: Config, drain: Drain, reusePort = false): Listening {
  const handler = (request: Request, info: ConnectionInfo) =>
    drain.handle(
      request,
      info.completed,
      (signal) => app.fetch(request, { remoteAddr: info.remoteAddr, signal, secrets: info.secrets }),
    );
  return listen({
    hostname: config.host,
    port: config.port,
    reusePort,
    limits: {
      headTimeoutMs: config.headTimeoutMs,
      keepAliveTimeoutMs: config.keepAliveTimeoutMs,
      maxConnections: config.maxConnections ?? DEFAULT_MAX_CONNECTIONS,
    },
  }, handler);
}

export function serve(app: FetchApp, config: Config, onStop: () => Promise<void> | void): Listening {
  const drain = new Drain({ graceMs: config.shutdownGraceMs });
  const serving = listenForGateway(app, config, drain);
  console.log(`gateway listening on http://${serving.addr.hostname}:${serving.addr.port}`);

  const stop = async () => {
    if (drain.stopping) return drain.hurry();
    serving.close();
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
  return serving;
}
