/**
 * @module The islands' live data as they ask for it: the latest value of a feed event, and how the feed is
 * doing. Rendering on the server there is no feed, so the default gives each call a signal holding the
 * rendered props and shares nothing between requests; the browser bundle provides the page's feed
 * (`client/feed_source.ts`) around every island it hydrates.
 */
import { createContext } from "preact";
import { useContext } from "preact/hooks";
import { type Signal, signal } from "@preact/signals";

export type FeedState = "live" | "reconnecting" | "closed";

export interface LiveFeed {
  /** The latest value of a feed event, starting from what the server rendered. */
  value<T>(event: string, initial: T): Signal<T>;
  /** How the page's feed is doing, for the status badge. */
  readonly state: Signal<FeedState>;
}

/** What a page rendered on the server shows: its props as they were, and a feed still to connect. */
const RENDERED: LiveFeed = {
  value: (_event, initial) => signal(initial),
  get state() {
    return signal<FeedState>("reconnecting");
  },
};

export const LiveFeedContext = createContext<LiveFeed>(RENDERED);

/** The feed the island is rendered with: the page's in the browser, none on the server. */
export function useLiveFeed(): LiveFeed {
  return useContext(LiveFeedContext);
}
