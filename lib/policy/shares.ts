/**
 * @module This process's shares of its owners' holdings in the store (`holdings.ts`): every write of them, the
 * one a decision commits and those made in the background as its requests end, the ledger writes their
 * tokens, leases run and allowances are given back.
 *
 * After a request ends, off its path: its concurrency place is given back at once, and its usage record is
 * written without waiting for the ledger's timer (a flush, which takes the records of every request ending
 * meanwhile), after which its tokens leave the share; each change is one read and one commit, merged when
 * several come close together. An allowance's share keeps showing billed tokens the ledger wrote until its
 * next write: more than it holds, never less.
 *
 * Leases. A share is leased (30 s by default) and renewed while it holds anything, so the share of a process
 * that died lapses and blocks nothing for longer. An allowance no request took from since the last renewal is
 * given back, and so is every one at shutdown.
 */
import { StoreUnreachable } from "../store/link.ts";
import { counterId } from "../usage/kv_layout.ts";
import type { LedgerProgress, PeriodKeys } from "../usage/mod.ts";
import { type Holdings, type OthersHeld, othersHeld, withShare } from "./holdings.ts";
import { type Billed, OwnerState } from "./owner_state.ts";
import type { OwnerLimit } from "./quotas.ts";

const DEFAULT_LEASE_MS = 30_000;
/** How long a change waits to be published, so that changes close together make one write. */
const PUBLISH_DELAY_MS = 20;
/** A decision loses a race only to another that succeeded; this bounds nothing real, it stops a loop. */
export const MAX_ATTEMPTS = 100;

export interface SharesOptions {
  kv: Deno.Kv;
  /** The usage ledger: its flush, its records' numbers and the mark a decision reads them against. */
  ledger: LedgerProgress;
  leaseMs?: number;
  /** The clock leases are on, ms since the epoch. */
  wallClock?: () => number;
  /** This process's name in the holdings; unique per process. */
  processId?: string;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
export const backoff = (attempt: number) => sleep(Math.random() * Math.min(2 ** attempt, 50));

export class Shares {
  readonly #kv: Deno.Kv;
  readonly #me: string;
  readonly #leaseMs: number;
  readonly #wall: () => number;
  readonly #owners = new Map<string, OwnerState>();
  readonly #ids = new WeakMap<Deno.KvKey, string>();
  /** Work that closing waits for. */
  readonly #running = new Set<Promise<unknown>>();
  /** Sequence numbers of the store reads under way. */
  readonly #reads = new Set<number>();
  #seq = 0;
  /** Billed tokens whose records the ledger has not been asked about yet. */
  #unwritten: [OwnerState, Billed][] = [];
  #timer: ReturnType<typeof setInterval>;
  #closed = false;
  /** Set as closing begins: a wait for the ledger gives up then (its records are written or given up on). */
  #closing = false;

  constructor(private readonly options: SharesOptions) {
    this.#kv = options.kv;
    this.#me = options.processId ?? crypto.randomUUID();
    this.#leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.#wall = options.wallClock ?? Date.now;
    this.#timer = setInterval(() => this.#renew(), this.#leaseMs / 3);
    Deno.unrefTimer(this.#timer);
  }

  /** Where the ledger marks how many of its records the counters hold. */
  get markKey(): Deno.KvKey {
    return this.options.ledger.markKey;
  }

  get closed(): boolean {
    return this.#closed;
  }

  state(owner: OwnerLimit): OwnerState {
    // An owner's limits, and so its holdings key, are made once a day per key: its id is joined once.
    let id = this.#ids.get(owner.holdings);
    if (id === undefined) this.#ids.set(owner.holdings, id = counterId(owner.holdings));
    let state = this.#owners.get(id);
    if (!state) this.#owners.set(id, state = new OwnerState(owner.holdings));
    return state;
  }

  track(work: Promise<unknown>): void {
    this.#running.add(work);
    work.finally(() => this.#running.delete(work));
  }

  /** A store read begins: its sequence number, which holds back pruning until `readDone`. */
  readStart(): number {
    const readAt = ++this.#seq;
    this.#reads.add(readAt);
    return readAt;
  }

  readDone(readAt: number): void {
    this.#reads.delete(readAt);
  }

  /** What the other processes hold of each read record, at the wall clock's now. */
  others(holdings: Deno.KvEntryMaybe<Holdings>[], labels: PeriodKeys): OthersHeld[] {
    const wall = this.#wall();
    return holdings.map((h) => othersHeld(h.value, this.#me, wall, labels));
  }

  /** Publishes this process's shares of `states` if no other decision wrote them since `holdings` was read. */
  async commit(states: OwnerState[], holdings: Deno.KvEntryMaybe<Holdings>[]): Promise<boolean> {
    const wall = this.#wall();
    const op = this.#kv.atomic();
    const versions = states.map((state, i) => {
      op.check(holdings[i]);
      const next = withShare(holdings[i].value, this.#me, state.share(wall + this.#leaseMs), wall);
      this.#put(op, state.key, next);
      return state.version;
    });
    if (!(await op.commit()).ok) return false;
    states.forEach((state, i) => state.published = Math.max(state.published, versions[i]));
    return true;
  }

  #put(op: Deno.AtomicOperation, key: Deno.KvKey, holdings: Holdings): void {
    if (Object.keys(holdings).length === 0) op.delete(key);
    else op.set(key, holdings, { expireIn: 4 * this.#leaseMs });
  }

  /** Billed tokens of `state` that leave its share once the ledger wrote their record. */
  billed(state: OwnerState, entry: Billed): void {
    this.#unwritten.push([state, entry]);
    // Requests that end close together share one flush of the ledger.
    if (this.#unwritten.length === 1) {
      this.track(sleep(PUBLISH_DELAY_MS).then(() => this.#awaitWritten()));
    }
  }

  /** Waits for the ledger to write the records of the billed tokens settled so far, then publishes. */
  async #awaitWritten(): Promise<void> {
    const batch = this.#unwritten;
    this.#unwritten = [];
    // Near a cap's end (nothing lent), other processes decide against this share, which shows the request's
    // reservation until its record is written: the ledger writes it now. Far from it, in the ledger's own
    // time: the share's tokens leave it only at its next renewal anyway, and a commit forced here made every
    // commit carry only the records of the last 20 ms.
    const urgent = batch.some(([state]) => !state.allowance.lending);
    for (let attempt = 1;; attempt++) {
      try {
        await (urgent ? this.options.ledger.flush() : this.options.ledger.whenWritten());
        break;
      } catch {
        // The ledger keeps the records and tries again; until it wrote them, the share keeps their tokens.
        if (this.#closing) return;
        await sleep(Math.min(100 * attempt, 1000));
      }
    }
    const writtenAt = ++this.#seq;
    const states = new Set<OwnerState>();
    for (const [state, entry] of batch) {
      state.written(entry, writtenAt);
      states.add(state);
      // An allowance's share shows these tokens until its next write: more than it holds, never less.
      if (!state.allowance.lending) this.publish(state);
    }
    // Forgotten now rather than at the next renewal: an owner far from its cap publishes only then, and until
    // then kept an entry per request (some 10 s of them), which outlived young collections and made the old
    // generation, and what each full collection marks, megabytes larger under load.
    const oldest = this.#oldestRead();
    for (const state of states) state.prune(oldest);
  }

  /**
   * Writes this process's current share of `state`'s owner shortly, unless a decision on it wrote it by then:
   * changes that come close together, and the decisions among them, make one write.
   */
  publish(state: OwnerState): void {
    if (state.publishing || this.#closed) return;
    const work = (async () => {
      try {
        await sleep(PUBLISH_DELAY_MS);
        // While the owner lends, its requests change what its share is made of, not what it shows.
        while (state.dirty || (!state.allowance.lending && state.published !== state.version)) {
          state.dirty = false;
          if (!await this.#write(state)) {
            // The renewal tries again.
            state.dirty = true;
            return;
          }
        }
      } finally {
        state.publishing = undefined;
      }
    })();
    state.publishing = work;
    this.track(work);
  }

  async #write(state: OwnerState): Promise<boolean> {
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      try {
        const entry = await this.#kv.get<Holdings>(state.key);
        state.prune(this.#oldestRead());
        const wall = this.#wall();
        const version = state.version;
        const mine = state.share(wall + this.#leaseMs);
        if (!mine && !entry.value?.[this.#me]) {
          state.published = Math.max(state.published, version);
          return true;
        }
        const op = this.#kv.atomic().check(entry);
        this.#put(op, state.key, withShare(entry.value, this.#me, mine, wall));
        if ((await op.commit()).ok) {
          state.published = Math.max(state.published, version);
          return true;
        }
      } catch (error) {
        if (!(error instanceof StoreUnreachable)) {
          console.error("gateway: reservations: cannot publish holdings:", error);
        }
        return false;
      }
      await backoff(attempt);
    }
    return false;
  }

  #oldestRead(): number {
    let oldest = this.#seq;
    for (const read of this.#reads) oldest = Math.min(oldest, read);
    return oldest;
  }

  /**
   * Renews the lease of every share this process holds, gives back the allowances no request took from since
   * the last renewal, and forgets owners it holds nothing of.
   */
  #renew(): void {
    for (const [id, state] of this.#owners) {
      state.prune(this.#oldestRead());
      const allowance = state.allowance;
      if (!allowance.touched && allowance.claims === 0) state.giveBack();
      allowance.touched = false;
      if (state.running || state.billed.length || !allowance.empty) {
        state.dirty = true;
        this.publish(state);
      } else if (state.idle) this.#owners.delete(id);
      else this.publish(state);
    }
  }

  /** Resolves once the decisions, waits for the ledger and publishes under way are done. */
  async idle(): Promise<void> {
    while (this.#running.size) await Promise.allSettled([...this.#running]);
  }

  /** Stops renewing and takes this process's shares out of the store. */
  async close(): Promise<void> {
    clearInterval(this.#timer);
    this.#closing = true;
    await this.idle();
    this.#closed = true;
    await Promise.all([...this.#owners.values()].map(async (state) => {
      state.giveBack();
      state.prune(this.#seq);
      await this.#write(state);
    }));
  }
}
