/**
 * @module Shutdown under `deno serve --parallel`. Each worker isolate has its own usage ledger, and the first
 * `Deno.exit` in any worker ends the whole process, so no worker may exit while another still has records to
 * write. The workers know each other through a BroadcastChannel: on SIGINT/SIGTERM each one flushes and says
 * so, and the one that hears the last of them exits the process. A bounded wait covers a worker that hangs.
 */

type Message = { type: "hello" | "here" | "done"; id: string };

export function coordinateShutdown(flush: () => Promise<void>, graceMs = 15_000): void {
  const id = crypto.randomUUID();
  const channel = new BroadcastChannel("gateway-shutdown");
  const peers = new Set<string>([id]);
  const done = new Set<string>();
  let stopping = false;

  const exitWhenAllDone = () => {
    if (stopping && [...peers].every((peer) => done.has(peer))) Deno.exit(0);
  };
  channel.onmessage = ({ data }: MessageEvent<Message>) => {
    peers.add(data.id);
    if (data.type === "hello") channel.postMessage({ type: "here", id } satisfies Message);
    if (data.type === "done") done.add(data.id);
    exitWhenAllDone();
  };
  channel.postMessage({ type: "hello", id } satisfies Message);

  const stop = async () => {
    if (stopping) return;
    stopping = true;
    setTimeout(() => Deno.exit(0), graceMs);
    try {
      await flush();
    } catch (error) {
      console.error("gateway: flush at shutdown failed:", error);
    }
    done.add(id);
    channel.postMessage({ type: "done", id } satisfies Message);
    exitWhenAllDone();
  };
  for (const signal of ["SIGINT", "SIGTERM"] as const) Deno.addSignalListener(signal, stop);
}
