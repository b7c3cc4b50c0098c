/**
 * @module Reservations: token quotas and concurrency limits that hold however many requests arrive at once, on
 * however many gateway processes share the store. Here is what a request meets: its hold, from this process's
 * allowances in memory or from a decision with the store (`decision.ts`), and its settling when it ends; this
 * process's shares are written in the background (`shares.ts`).
 *
 * At admission a request reserves what it can cost, its prompt estimate plus the output it may produce,
 * against every token cap it meets, and takes a place among the requests in progress of every owner with a
 * concurrency limit. When it ends (whole, streamed, broken, failed, its client gone, the gateway stopping) the
 * account settles it: the reservation becomes the tokens billed, and those leave the holdings once the ledger
 * has written them to the counters.
 *
 * Allowances. Far from a cap's end, a decision also claims for the process an allowance of each owner's
 * headroom (`allowance.ts`: an eighth of this process's part of it), which its share shows as held, so every
 * other process counts it. Later requests whose owners limit only tokens are admitted from the allowances in
 * memory, giving back what they did not bill when they end; when one runs below half, a decision with no
 * request sizes it again in the background. Near the end (an eighth of the headroom under 16 requests'
 * reservations) no allowance is kept and every request is decided with the store, so the bound stays exact
 * and no process holds back what another's request could use.
 *
 * Cost. A key and user with no limit: nothing. Token caps far from their end: nothing per request; one read
 * and one commit per owner each time half an allowance is spent (for a cap of 10^9 and requests of ~4,100
 * tokens reserved, one per several thousand requests, more seldom as requests bill less than they reserve),
 * and each lease renewal. Near a cap's end, or with a concurrency limit: one `getMany` and one commit per
 * decision; the requests of one key that arrive while a decision is in flight are decided together by the
 * next one. After such a request ends, off its path, one read and one commit per change of its share
 * (`shares.ts`).
 *
 * The per-minute rate limit stays a separate, earlier check: its slots are claimed ahead in memory so that it
 * costs no store round trip, and it refuses before the body is read, while a reservation needs the shaped
 * request; a request refused here gives its rate-limit slot back, in memory (`mod.ts`).
 */
import { StoreUnavailable } from "../errors.ts";
import { type Ask, Decisions, Hold, type HoldPart, storeFailure, type Waiting } from "./decision.ts";
import { type Billed, LivePart, type OwnerState } from "./owner_state.ts";
import { Shares } from "./shares.ts";
import type { LedgerProgress } from "../usage/mod.ts";

export { type Ask, Hold } from "./decision.ts";

export interface ReservationOptions {
  kv: Deno.Kv;
  /** The usage ledger: its flush, its records' numbers and the mark a decision reads them against. */
  ledger: LedgerProgress;
  /** Output reserved, and asked for, where nothing else bounds a request's output. */
  defaultOutput: number;
  leaseMs?: number;
  /** The clock leases are on, ms since the epoch; periods follow the clock each request was admitted by. */
  wallClock?: () => number;
  /** This process's name in the holdings; unique per process. */
  processId?: string;
}

export class Reservations {
  readonly #shares: Shares;
  readonly #decisions: Decisions;
  /** Asks waiting, by key: while a key's queue exists, a decision for that key is under way. */
  readonly #queues = new Map<string, Waiting[]>();

  constructor(private readonly options: ReservationOptions) {
    this.#shares = new Shares(options);
    this.#decisions = new Decisions({
      kv: options.kv,
      shares: this.#shares,
      defaultOutput: options.defaultOutput,
      settle: (h, billed) => this.#settle(h, billed),
    });
  }

  /**
   * Reserves for one request of key `keyId`: its hold at once when this process's allowances cover it, else
   * a promise of its hold, rejected with the refusal.
   */
  reserve(keyId: string, ask: Ask): Hold | Promise<Hold> {
    const states = ask.limits.owners.map((o) => this.#shares.state(o));
    const lent = this.#lend(ask, states);
    if (lent) return lent;
    for (const s of states) s.asking++;
    const { promise, resolve, reject } = Promise.withResolvers<Hold>();
    const waiting: Waiting = { ...ask, states, resolve, reject };
    const queue = this.#queues.get(keyId);
    if (queue) queue.push(waiting);
    else {
      const fresh = [waiting];
      this.#queues.set(keyId, fresh);
      this.#shares.track(this.#drain(keyId, fresh));
    }
    return promise;
  }

  /**
   * Admits from this process's allowances, in memory, a request whose every owner caps tokens and limits no
   * requests in progress, when each allowance covers what it reserves; claims more in the background when one
   * runs low. Undefined when the store must decide.
   */
  #lend(ask: Ask, states: OwnerState[]): Hold | undefined {
    const { owners, labels } = ask.limits;
    if (owners.length === 0) return undefined;
    const output = ask.output ?? this.options.defaultOutput;
    const tokens = ask.prompt + output;
    for (let i = 0; i < owners.length; i++) {
      const owner = owners[i];
      if (owner.maxConcurrent !== undefined || !states[i].allowance.covers(labels.day, owner.terms, tokens)) {
        return undefined;
      }
    }
    const parts = states.map((state): HoldPart => ({
      state,
      part: new LivePart(labels, tokens),
      tokens: true,
      places: false,
    }));
    const hold = new Hold((h, billed) => this.#settle(h, billed), parts, output);
    let low = false;
    for (const { state, part } of parts) {
      const allowance = state.allowance;
      allowance.usable -= tokens;
      allowance.touched = true;
      state.hold(part);
      low ||= allowance.low && allowance.claims === 0;
    }
    if (low && !this.#shares.closed) this.#claim(ask, states);
    return hold;
  }

  /** Sizes the allowances of `states` again with the store, in the background, before they run out. */
  #claim(ask: Ask, states: OwnerState[]): void {
    for (const s of states) {
      s.allowance.claims++;
      s.asking++;
    }
    this.#shares.track(
      this.#decisions.decide([], ask, states).catch(storeFailure).finally(() => {
        for (const s of states) {
          s.allowance.claims--;
          s.asking--;
        }
      }),
    );
  }

  /** Decides a key's asks, those that came together at once, until none is left. */
  async #drain(keyId: string, queue: Waiting[]): Promise<void> {
    try {
      while (queue.length) {
        const signature = queue[0].limits.signature;
        const round = queue.filter((w) => w.limits.signature === signature);
        queue.splice(0, queue.length, ...queue.filter((w) => w.limits.signature !== signature));
        try {
          await this.#decisions.decide(round, round[0], round[0].states);
        } catch (error) {
          const failure = error instanceof StoreUnavailable ? error : storeFailure(error);
          for (const w of round) w.reject(failure);
        } finally {
          for (const w of round) for (const s of w.states) s.asking--;
        }
      }
    } finally {
      this.#queues.delete(keyId);
    }
  }

  #settle(hold: Hold, billed: number): void {
    for (const { state, part, tokens, places } of hold.parts) {
      state.release(part);
      // What an allowance's request did not bill is its again; the share shows the same total.
      const lending = tokens && state.allowance.lending && state.allowance.day === part.labels.day;
      if (lending) state.allowance.usable += part.tokens - billed;
      if (tokens && billed > 0) {
        // The account records the request before it settles the hold: the ledger's last number is its record's.
        const entry: Billed = { labels: part.labels, tokens: billed, seq: this.options.ledger.recorded };
        state.bill(entry);
        this.#shares.billed(state, entry);
      }
      // A place is given back at once; tokens once the ledger wrote them, unless none were billed.
      if (places || (tokens && billed === 0 && !lending)) this.#shares.publish(state);
    }
  }

  /** Resolves once the decisions, waits for the ledger and publishes under way are done. */
  idle(): Promise<void> {
    return this.#shares.idle();
  }

  /**
   * Stops renewing and takes this process's shares out of the store. Call it after the ledger's last flush, so
   * every billed token is in the counters and nothing is left to hold.
   */
  close(): Promise<void> {
    return this.#shares.close();
  }
}
