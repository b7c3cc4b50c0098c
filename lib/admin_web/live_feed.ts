/**
 * @module The admin page's live feed, as Server-Sent Events: `health` whenever a server's state changes (at
 * most every 200 ms) and at least every second, since some changes are driven by time alone (a breaker's
 * open period running out, a probe growing old); `usage` every two seconds when it changed.
 */
import type { Deps } from "../deps.ts";
import type { AdminServices } from "./services.ts";
import { feedResponse } from "../http/feed_response.ts";

const HEALTH_EVERY_MS = 1_000;
const HEALTH_COALESCE_MS = 200;
const USAGE_EVERY_MS = 2_000;
const KEEPALIVE_MS = 15_000;

export function liveFeed(deps: Deps, admin: AdminServices, signal: AbortSignal): Response {
  const encoder = new TextEncoder();
  const cleanups: (() => void)[] = [];
  const stop = () => cleanups.splice(0).forEach((f) => f());

  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      let open = true;
      const write = (text: string) => {
        if (!open) return;
        try {
          controller.enqueue(encoder.encode(text));
        } catch {
          open = false;
          stop();
        }
      };
      const event = (name: string, data: unknown) =>
        write(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);

      let pending: ReturnType<typeof setTimeout> | undefined;
      const health = () => {
        clearTimeout(pending);
        pending = undefined;
        event("health", admin.health());
      };
      const soon = () => pending ??= setTimeout(health, HEALTH_COALESCE_MS);

      let lastUsage = "";
      let usageBusy = false;
      const usage = async () => {
        if (usageBusy) return;
        usageBusy = true;
        try {
          const text = JSON.stringify(await admin.usage.view());
          if (text !== lastUsage) write(`event: usage\ndata: ${lastUsage = text}\n\n`);
        } catch (error) {
          write(`event: problem\ndata: ${JSON.stringify({ message: `usage unavailable: ${error}` })}\n\n`);
        } finally {
          usageBusy = false;
        }
      };

      const timers = [
        setInterval(health, HEALTH_EVERY_MS),
        setInterval(usage, USAGE_EVERY_MS),
        setInterval(() => write(": keep-alive\n\n"), KEEPALIVE_MS),
      ];
      const unsubscribe = deps.servers.subscribe(soon);
      const onAbort = () => {
        stop();
        try {
          controller.close();
        } catch { /* already closed */ }
      };
      signal.addEventListener("abort", onAbort, { once: true });
      cleanups.push(() => {
        open = false;
        timers.forEach(clearInterval);
        clearTimeout(pending);
        unsubscribe();
        signal.removeEventListener("abort", onAbort);
      });
      write("retry: 2000\n\n");
      health();
      usage();
    },
    cancel: stop,
  });
  return feedResponse(body, {
    headers: {
      "Content-Type": "text/event-stream; charset=utf-8",
      "Cache-Control": "no-store",
      "X-Accel-Buffering": "no",
    },
  });
}
