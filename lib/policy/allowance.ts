/**
 * @module A process's allowance of one owner's token caps: a block of the caps' headroom that it claimed in
 * the store and shows in its share of the holdings, so every other process counts it as held, and from which
 * it admits requests in memory, without a store round trip each. A request reserves from it and gives back
 * what it did not bill; billed tokens stay spent. The share shows the allowance left on top of what the
 * requests in progress hold, under the day the allowance was claimed for.
 *
 * Exact because the share never shows less than the allowance left: a shrink applies in memory before the
 * commit that shows it (a failed commit leaves the store showing more), a growth is shown by every share
 * computed from the moment it is asked for and usable only once its own commit landed. Of two commits of one
 * share, the later was computed after reading the earlier, so the store's share is always one computed after
 * every growth that landed. A growth asked for before the allowance shrank below it, or before the day
 * changed, is dropped when it lands (its epoch is over); it only ever made the share show more.
 */

/** A process claims at most this fraction of its part of an owner's headroom at once. */
const FRACTION = 1 / 8;
/** An allowance smaller than this many requests' reservations is not worth keeping: each request asks the store. */
const MIN_REQUESTS = 16;

/**
 * The allowance to hold, given the headroom this process may take (`room`, its allowance included), the
 * processes holding shares of the owner (this one included) and what a request reserves: an eighth of this
 * process's part of the headroom, or nothing near the end of a cap, where every request is decided with the
 * store so that no process holds back what another's request could use.
 */
export function allowanceSize(room: number, processes: number, perRequest: number): number {
  const size = Math.floor(room * FRACTION / processes);
  return size >= MIN_REQUESTS * perRequest ? size : 0;
}

export interface Growth {
  tokens: number;
  epoch: number;
}

export class Allowance {
  /** Tokens this process may still reserve in memory; below 0 when requests billed more than they reserved. */
  usable = 0;
  /** The day label (`d:…`) the allowance counts on, and the caps it was sized for. */
  day?: string;
  terms?: string;
  /** The size last chosen; 0 while every request goes to the store. */
  size = 0;
  /** A request took from it since the last renewal. */
  touched = false;
  /** Claims running in the background. */
  claims = 0;
  #growth?: Growth;
  #epoch = 0;

  /** What the share shows beyond the requests in progress, under `day`. */
  get shown(): number {
    return Math.max(0, this.usable + (this.#growth?.tokens ?? 0));
  }

  get lending(): boolean {
    return this.size > 0;
  }

  /** Nothing held or asked for. */
  get empty(): boolean {
    return this.usable <= 0 && !this.#growth;
  }

  /** The allowance can admit a request reserving `tokens` on `day` under caps `terms` at once. */
  covers(day: string, terms: string, tokens: number): boolean {
    return this.size > 0 && this.day === day && this.terms === terms && this.usable >= tokens;
  }

  /** Less than half the chosen size is left: time to claim more. */
  get low(): boolean {
    return this.usable < this.size / 2;
  }

  /**
   * Sets the allowance to `size` for `day` and `terms`: a shrink at once, a growth returned to be shown by the
   * commit about to be made and confirmed by `landed`. One growth at a time.
   */
  resize(size: number, day: string, terms: string): Growth | undefined {
    if (this.day !== day) {
      this.usable = 0;
      this.#epoch++;
    }
    this.day = day;
    this.terms = terms;
    this.size = size;
    let asked = this.#growth?.epoch === this.#epoch ? this.#growth.tokens : 0;
    if (this.usable + asked > size) {
      if (asked > size) {
        this.#epoch++;
        asked = 0;
      }
      this.usable = Math.min(this.usable, size - asked);
    }
    const more = size - this.usable - asked;
    if (this.#growth || more <= 0) return undefined;
    return this.#growth = { tokens: more, epoch: this.#epoch };
  }

  /** The commit showing `growth` landed (`ok`) or not. */
  landed(growth: Growth, ok: boolean): void {
    if (this.#growth !== growth) return;
    this.#growth = undefined;
    if (ok && growth.epoch === this.#epoch) this.usable += growth.tokens;
  }

  /** Gives everything back (the process is idle or stopping); growths under way will be dropped. */
  clear(): void {
    this.usable = 0;
    this.size = 0;
    this.#epoch++;
  }
}
