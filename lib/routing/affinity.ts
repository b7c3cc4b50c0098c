/**
 * @module Conversation affinity: the next turn of a conversation is fastest on the server that still holds its
 * prefix in cache. A request's leading messages are fingerprinted prefix by prefix; a request that continues
 * an earlier whole request (starts with all of its messages and adds more) is steered to the server that
 * served it. A request that merely repeats another is not: many clients send the same one-line question, and
 * that is no conversation to keep together. Only a hint: it expires, and the scheduler honours it only while
 * that server has room.
 *
 * Fingerprints hash each message's role, length and first characters: a request costs one short pass per
 * message however long the prompt, and a rare collision only sends a request to a server that is also fine.
 */
import type { ChatMessage } from "../chat/types.ts";

const SAMPLE_CHARS = 256;

interface Placement {
  server: string;
  at: number;
  /** When the entry took its place in the table's order; older than `at` once it was refreshed. */
  since: number;
}

/** Cumulative fingerprints: entry i covers messages 0..i, seeded with the model so models never mix. */
export function prefixPrints(model: string, messages: readonly Pick<ChatMessage, "role" | "content">[]) {
  let h = 0x811c9dc5;
  const mix = (text: string, limit: number) => {
    const n = Math.min(text.length, limit);
    for (let i = 0; i < n; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619) >>> 0;
  };
  mix(model, SAMPLE_CHARS);
  const prints: number[] = [];
  for (const m of messages) {
    mix(`${m.role}:${m.content.length}:`, 64);
    mix(m.content, SAMPLE_CHARS);
    // The end of a message differs between turns more often than its start (a shared preamble).
    if (m.content.length > SAMPLE_CHARS) mix(m.content.slice(-64), 64);
    prints.push(h);
  }
  return prints;
}

export class AffinityTable {
  readonly #placed = new Map<number, Placement>();

  constructor(readonly ttlMs: number, readonly limit: number) {}

  /**
   * The server that served the longest earlier request this one continues. A prefix of only system
   * messages says nothing about the conversation (every request of a key may share it), so it never counts.
   */
  lookup(prints: readonly number[], roles: readonly string[], now: number): string | undefined {
    const firstOwn = roles.findIndex((r) => r !== "system");
    if (firstOwn < 0) return undefined;
    for (let i = prints.length - 2; i >= firstOwn; i--) {
      const placed = this.#placed.get(prints[i]);
      if (placed && now - placed.at <= this.ttlMs) return placed.server;
    }
    return undefined;
  }

  /**
   * The whole request went to `server`: its next turn will start with exactly these messages. A known entry
   * is refreshed where it is: taking it out and putting it back made the map rebuild its table every few
   * requests, a table that outlived the request (a conversation's turns, or one prompt sent again and again,
   * refresh the same entry all day).
   */
  remember(prints: readonly number[], server: string, now: number): void {
    const last = prints.at(-1);
    if (last === undefined) return;
    const placed = this.#placed.get(last);
    if (placed !== undefined) {
      placed.server = server;
      placed.at = now;
      return;
    }
    this.#placed.set(last, { server, at: now, since: now });
    if (this.#placed.size > this.limit) this.#evict(now);
  }

  /**
   * Drops the stalest entry: the oldest in the map's order that was not refreshed since it took its place, or
   * expired. One refreshed since moves to the end instead (each refresh earns one such move): nearly the order
   * of use that re-inserting every refreshed entry kept, at the cost of a move per refresh only at the bound.
   */
  #evict(now: number): void {
    for (const [print, placed] of this.#placed) {
      this.#placed.delete(print);
      if (placed.at === placed.since || now - placed.at > this.ttlMs) return;
      placed.since = placed.at;
      this.#placed.set(print, placed);
    }
  }

  get size(): number {
    return this.#placed.size;
  }
}
