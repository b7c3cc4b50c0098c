/// <reference lib="dom" />
/**
 * @module The admin page's browser bundle (`deno task bundle` → static/bundle/islands.js): hydrates every
 * island marker the server rendered, inside the page's one live feed. Islands are listed here by name, as
 * the server names them.
 */
import { h, hydrate } from "preact";
import type { ComponentType } from "preact";
import ServerHealth from "../islands/ServerHealth.tsx";
import Usage from "../islands/Usage.tsx";
import CopySecret from "../islands/CopySecret.tsx";
import ServerState from "../islands/ServerState.tsx";
import { LiveFeedContext } from "../shared/live.ts";
import { FeedSource } from "./feed_source.ts";

// deno-lint-ignore no-explicit-any
const ISLANDS: Record<string, ComponentType<any>> = { ServerHealth, ServerState, Usage, CopySecret };

const feed = new FeedSource();
for (const el of document.querySelectorAll<HTMLElement>("[data-island]")) {
  const component = ISLANDS[el.dataset.island ?? ""];
  if (!component) continue;
  const island = h(component, JSON.parse(el.dataset.props ?? "{}"));
  hydrate(h(LiveFeedContext.Provider, { value: feed }, island), el);
}
