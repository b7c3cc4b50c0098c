/// <reference lib="dom" />
/**
 * @module The admin page's live feed in the browser: one EventSource per page, opened when the first island
 * asks for an event, its named events kept in signals the islands read.
 */
import { type Signal, signal } from "@preact/signals";
import type { FeedState, LiveFeed } from "../shared/live.ts";

const FEED_PATH = "/admin/feed";

export class FeedSource implements LiveFeed {
  readonly state: Signal<FeedState> = signal("reconnecting");
  private readonly channels = new Map<string, Signal<unknown>>();
  private source: EventSource | undefined;

  value<T>(event: string, initial: T): Signal<T> {
    let target = this.channels.get(event);
    if (!target) {
      this.channels.set(event, target = signal<unknown>(initial));
      if (this.source) listen(this.source, event, target);
      else queueMicrotask(() => this.connect());
    }
    return target as Signal<T>;
  }

  private connect(): void {
    if (this.source) return;
    const source = this.source = new EventSource(FEED_PATH);
    source.onopen = () => this.state.value = "live";
    // The browser reconnects by itself unless the server refused (a session that ended): then it stays closed.
    source.onerror = () =>
      this.state.value = source.readyState === EventSource.CLOSED ? "closed" : "reconnecting";
    for (const [event, target] of this.channels) listen(source, event, target);
  }
}

function listen(from: EventSource, event: string, target: Signal<unknown>): void {
  from.addEventListener(event, (e) => target.value = JSON.parse((e as MessageEvent<string>).data));
}
