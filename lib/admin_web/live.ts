/// <reference lib="dom" />
/**
 * @module The islands' live data: one EventSource per page, its named events kept in signals. On the server
 * (rendering) there is no feed: each call gets a signal holding the rendered props, and nothing is shared
 * between requests.
 */
import { type Signal, signal } from "@preact/signals";

export const FEED_PATH = "/admin/feed";

export type FeedState = "live" | "reconnecting" | "closed";

const inBrowser = typeof document !== "undefined" && typeof EventSource !== "undefined";
const channels = new Map<string, Signal<unknown>>();
let source: EventSource | undefined;

/** How the page's feed is doing, for the status badge. */
export const feedState: Signal<FeedState> = signal("reconnecting");

function connect(): void {
  if (source) return;
  source = new EventSource(FEED_PATH);
  source.onopen = () => feedState.value = "live";
  // The browser reconnects by itself unless the server refused (a session that ended): then it stays closed.
  source.onerror = () =>
    feedState.value = source?.readyState === EventSource.CLOSED ? "closed" : "reconnecting";
  for (const [event, target] of channels) listen(source, event, target);
}

function listen(from: EventSource, event: string, target: Signal<unknown>): void {
  from.addEventListener(event, (e) => target.value = JSON.parse((e as MessageEvent<string>).data));
}

/** The latest value of a feed event, starting from what the server rendered. */
export function liveValue<T>(event: string, initial: T): Signal<T> {
  if (!inBrowser) return signal(initial);
  let target = channels.get(event);
  if (!target) {
    channels.set(event, target = signal<unknown>(initial));
    if (source) listen(source, event, target);
    else queueMicrotask(connect);
  }
  return target as Signal<T>;
}
