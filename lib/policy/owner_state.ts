/**
 * @module This process's part of one owner's holdings, exact in memory: the requests it admitted that are
 * still running, each with the tokens it reserved, and the tokens billed to requests that ended whose usage
 * records may not be in the token counters yet, and the allowance it may still admit from (`allowance.ts`).
 * The share it publishes is made from this, and its own admissions count this rather than the stored share,
 * which may be behind.
 */
import type { PeriodKeys, PeriodName } from "../usage/mod.ts";
import { Allowance } from "./allowance.ts";
import type { Share } from "./holdings.ts";

export interface Part {
  labels: PeriodKeys;
  tokens: number;
}

/**
 * One running request's part of an owner's holdings, linked into that owner's list while it runs. A list
 * takes a request in and out without allocating, where a `Map` rebuilds its table as the number running
 * rises and falls, and those tables, outliving young collections, were among the largest things the gateway
 * promoted to the old generation per request.
 */
export class LivePart implements Part {
  prev: LivePart | undefined = undefined;
  next: LivePart | undefined = undefined;
  linked = false;

  constructor(readonly labels: PeriodKeys, readonly tokens: number) {}
}

export interface Billed extends Part {
  /** The number the ledger gave its usage record (`LedgerProgress.recorded`). */
  seq: number;
  /**
   * The reservations' sequence number at which the ledger was known to have written the record, once it
   * was: a store read begun after it sees these tokens in the counters, so the entry may be forgotten once no
   * read begun before is under way.
   */
  writtenAt?: number;
}

/** What this process holds in one period, as a snapshot of the counters must add it. */
export interface Mine {
  /** Tokens reserved by requests in progress. */
  reserved: number;
  /** Tokens billed that the snapshot does not find in the counters. */
  billed: number;
}

export class OwnerState {
  /** Requests in progress, each with what it reserved here (nothing, where this owner caps no tokens). */
  #first: LivePart | undefined;
  #running = 0;
  billed: Billed[] = [];
  /** Counts the changes to what the share shows. */
  version = 0;
  /** The version the store shows, as far as this process wrote it. */
  published = 0;
  /** Asks waiting for a decision on this owner: while there are any, the state must not be forgotten. */
  asking = 0;
  /** A write is wanted: a change, or the lease's renewal. */
  dirty = false;
  publishing?: Promise<void>;
  /** What this process may admit in memory; its share shows it as held. */
  readonly allowance = new Allowance();

  constructor(readonly key: Deno.KvKey) {}

  /** How many of this owner's requests are in progress here. */
  get running(): number {
    return this.#running;
  }

  hold(part: LivePart): void {
    if (part.linked) return;
    part.linked = true;
    part.next = this.#first;
    if (this.#first) this.#first.prev = part;
    this.#first = part;
    this.#running++;
    this.version++;
  }

  release(part: LivePart): void {
    if (!part.linked) return;
    part.linked = false;
    if (part.prev) part.prev.next = part.next;
    else this.#first = part.next;
    if (part.next) part.next.prev = part.prev;
    part.prev = part.next = undefined;
    this.#running--;
    this.version++;
  }

  bill(entry: Billed): void {
    this.billed.push(entry);
    this.version++;
  }

  /** The ledger wrote `entry`'s record: the share no longer shows its tokens. */
  written(entry: Billed, at: number): void {
    entry.writtenAt = at;
    this.version++;
  }

  /**
   * `counted` is how many of the ledger's records the snapshot's counters hold (its mark, read in the same
   * snapshot): exact, where "written before the read began" would count a record twice whose commit landed
   * while the news of it was still on its way to this process.
   */
  mine(period: PeriodName, labels: PeriodKeys, counted: number): Mine {
    const label = labels[period];
    const held: Mine = { reserved: 0, billed: 0 };
    for (let part = this.#first; part; part = part.next) {
      if (part.labels[period] === label) held.reserved += part.tokens;
    }
    for (const b of this.billed) {
      if (b.labels[period] === label && b.seq > counted) held.billed += b.tokens;
    }
    return held;
  }

  /**
   * The share to publish, leased until `until`; undefined when nothing is held. Billed tokens the ledger
   * wrote are left out: the commit publishing this comes after that write, so a reader finds them counted.
   */
  share(until: number): Share | undefined {
    const tokens: Record<string, number> = {};
    const add = ({ labels, tokens: n }: Part) => {
      if (n > 0) tokens[labels.day] = (tokens[labels.day] ?? 0) + n;
    };
    for (let part = this.#first; part; part = part.next) add(part);
    for (const b of this.billed) if (b.writtenAt === undefined) add(b);
    const lent = this.allowance.shown;
    if (lent > 0) tokens[this.allowance.day!] = (tokens[this.allowance.day!] ?? 0) + lent;
    if (this.#running === 0 && Object.keys(tokens).length === 0) return undefined;
    return { until, inflight: this.#running, tokens };
  }

  /** Gives the allowance back: the share shows less, to be written. */
  giveBack(): void {
    if (this.allowance.empty && !this.allowance.lending) return;
    this.allowance.clear();
    this.version++;
  }

  /** Forgets billed tokens that no read begun at or after `oldestRead` needs. */
  prune(oldestRead: number): void {
    if (this.billed.length === 0) return;
    this.billed = this.billed.filter((b) => b.writtenAt === undefined || b.writtenAt > oldestRead);
  }

  /** Nothing held, asked for or left to publish: the state can be forgotten. */
  get idle(): boolean {
    return this.#running === 0 && this.billed.length === 0 && this.asking === 0 && !this.dirty &&
      !this.publishing && this.published === this.version && this.allowance.empty &&
      this.allowance.claims === 0;
  }
}
