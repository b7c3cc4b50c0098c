/**
 * @module Shutdown of the process's gateways: one, or the workers of `start:parallel` and of
 * `deno serve --parallel`. Each worker isolate has its own requests in flight and its own usage ledger, and
 * ending the process ends them all, so no worker may end it while another still has requests to finish or
 * records to write. The workers know each other through a BroadcastChannel: on SIGINT/SIGTERM each one drains
 * and flushes and says so, and the one that hears the last of them exits the process, with status 1 if any
 * worker could not write its records. A bounded wait covers a worker that hangs.
 *
 * Each worker closes its own listener when it stops. A request that still reaches a stopping worker (on a
 * connection kept alive from before) is refused by its route through the drain: 503 in the path's own error
 * shape, recorded like any refusal (lib/server/stopping_refusal.ts).
 *
 * What else must stop the process as a signal would (the launcher that started it going away,
 * lib/server/launcher_exit.ts) calls the function `coordinateShutdown` returns, with its reason.
 */
import { errorText, log } from "../log/mod.ts";

type Message = { type: "hello" | "here" | "stop" | "done"; id: string; failed?: boolean };

const SIGNALS = ["SIGINT", "SIGTERM"] as const;

export interface WorkerShutdown {
  /**
   * Ends the worker's requests (bounded) and writes what it has pending; rejects if writing failed. `reason`:
   * what stopped it (a signal's name), for the log.
   */
  drainAndFlush: (reason: string) => Promise<void>;
  /** A second signal: the drain stops waiting. */
  hurry?: () => void;
  /** Beyond this, the process exits whether or not every worker said it was done. */
  hangMs: number;
  /**
   * Ends the process with `code`. `Deno.exit` does so in the process's main isolate and in a worker of
   * `deno serve --parallel`, but in a Worker a program starts (`start:parallel`) it ends only that worker:
   * there the worker asks its main isolate to (parallel.ts).
   */
  exit?: (code: number) => void;
}

/** Stops as a signal would, for `reason`; returned by `coordinateShutdown`. */
export type StopProcess = (reason: string) => void;

export function coordinateShutdown(
  { drainAndFlush, hurry, hangMs, exit = Deno.exit }: WorkerShutdown,
): StopProcess {
  const id = crypto.randomUUID();
  const channel = new BroadcastChannel("gateway-shutdown");
  const peers = new Set<string>([id]);
  const done = new Set<string>();
  let failed = false;
  let stopping = false;

  const exitWhenAllDone = () => {
    if (stopping && [...peers].every((peer) => done.has(peer))) exit(failed ? 1 : 0);
  };
  channel.onmessage = ({ data }: MessageEvent<Message>) => {
    peers.add(data.id);
    // A worker that starts after a signal did not hear it: told at once that this one is stopping, it stops too.
    if (data.type === "hello") {
      channel.postMessage({ type: stopping ? "stop" : "here", id } satisfies Message);
    }
    if (data.type === "done") {
      done.add(data.id);
      failed ||= data.failed === true;
    }
    // A signal stops the whole process, but it may reach only some workers: one that hears of a stop starts
    // its own, or the others would wait for it until the hang bound.
    if (data.type === "stop" || data.type === "done") void stop(false, "another worker is stopping");
    exitWhenAllDone();
  };
  channel.postMessage({ type: "hello", id } satisfies Message);

  let signals = 0;
  const stop = async (signalled: boolean, reason: string) => {
    // Only a second signal to this worker hurries it; a peer's stop arriving before our own signal does not.
    if (signalled && ++signals > 1) return hurry?.();
    if (stopping) return;
    stopping = true;
    channel.postMessage({ type: "stop", id } satisfies Message);
    setTimeout(() => {
      log.error("gateway.hung", `a worker did not finish its shutdown within ${hangMs} ms; exiting`);
      exit(1);
    }, hangMs);
    try {
      await drainAndFlush(reason);
    } catch (error) {
      log.error("gateway.unwritten", `writing pending usage at shutdown failed: ${errorText(error)}`);
      failed = true;
    }
    done.add(id);
    channel.postMessage({ type: "done", id, failed } satisfies Message);
    exitWhenAllDone();
  };
  for (const signal of SIGNALS) Deno.addSignalListener(signal, () => void stop(true, signal));
  return (reason) => void stop(false, reason);
}
