/**
 * @module Reservations: token quotas and concurrency limits that hold however many requests arrive at once, on
 * however many gateway processes share the store.
 *
 * At admission a request reserves what it can cost, its prompt estimate plus the output it may produce,
 * against every token cap it meets, and takes a place among the requests in progress of every owner with a
 * concurrency limit. When it ends (whole, streamed, broken, failed, its client gone, the gateway stopping) the
 * account settles it: the reservation becomes the tokens billed, and those leave the holdings once the ledger
 * has written them to the counters.
 *
 * Store. An owner's holdings (`holdings.ts`) are one record in which each process publishes its share. A
 * decision reads the record and the owner's token counters in one `getMany` (one snapshot), and commits the
 * process's new share with a check of the record's versionstamp, so two decisions on one owner anywhere are
 * serialised: the later one reads again. The counters need no check: tokens reach them only from the ledger,
 * while the process that billed them still shows them in its share, and it drops them from its share only
 * after the write; a snapshot therefore counts each token at least once. A process counts its own part from
 * memory (`owner_state.ts`), which is exact at once, and the others' from the snapshot.
 *
 * Allowances. Far from a cap's end, a decision also claims for the process an allowance of each owner's
 * headroom (`allowance.ts`: an eighth of this process's part of it), which its share shows as held, so every
 * other process counts it. Later requests whose owners limit only tokens are admitted from the allowances in
 * memory, giving back what they did not bill when they end; when one runs below half, a decision with no
 * request sizes it again in the background. Near the end (an eighth of the headroom under 16 requests'
 * reservations) no allowance is kept and every request is decided with the store, so the bound stays exact
 * and no process holds back what another's request could use. An allowance no request took from since the
 * last renewal is given back, and so is every one at shutdown.
 *
 * Cost. A key and user with no limit: nothing. Token caps far from their end: nothing per request; one read
 * and one commit per owner each time half an allowance is spent (for a cap of 10^9 and requests of ~4,100
 * tokens reserved, one per several thousand requests, more seldom as requests bill less than they reserve),
 * and each lease renewal. Near a cap's end, or with a concurrency limit: one `getMany` and one commit per
 * decision; the requests of one key that arrive while a decision is in flight are decided together by the
 * next one. After such a request ends, off its path: its concurrency place is given back at once, and its
 * usage record is written without waiting for the ledger's timer (a flush, which takes the records of every
 * request ending meanwhile), after which its tokens leave the share; each change is one read and one commit,
 * merged when several come close together. An allowance's share keeps showing billed tokens the ledger wrote
 * until its next write: more than it holds, never less.
 *
 * Leases. A share is leased (30 s by default) and renewed while it holds anything, so the share of a process
 * that died lapses and blocks nothing for longer.
 *
 * Decisions where the spec is silent. A request whose output does not fit is admitted with its output ceiling
 * lowered to what the caps still allow (`num_predict` / `max_tokens` is set to it); it is refused (429
 * `quota_exceeded`) only when not one output token fits beside its prompt. A request that names no bound and
 * whose key has no `--max-predict` reserves, and is limited to, the configured default output. The
 * per-minute rate limit stays a separate, earlier check: its slots are claimed ahead in memory so that it
 * costs no store round trip, and it refuses before the body is read, while a reservation needs the shaped
 * request; a request refused here has spent its rate-limit slot, as one refused by a quota always did.
 */
import { ConcurrencyLimited, type GatewayError, StoreUnavailable } from "../errors.ts";
import { counterId } from "../usage/kv_layout.ts";
import { allowanceSize, type Growth } from "./allowance.ts";
import { type Holdings, type OthersHeld, othersHeld, withShare } from "./holdings.ts";
import { type Billed, OwnerState, type Part } from "./owner_state.ts";
import { type Cap, type KeyLimits, liftsLast, type OwnerLimit, tooLittleLeft, usedUp } from "./quotas.ts";

const DEFAULT_LEASE_MS = 30_000;
/** How long a change waits to be published, so that changes close together make one write. */
const PUBLISH_DELAY_MS = 20;
/** A decision loses a race only to another that succeeded; this bounds nothing real, it stops a loop. */
const MAX_ATTEMPTS = 100;

export interface ReservationOptions {
  kv: Deno.Kv;
  /** Resolves once every usage record taken so far is in the token counters (the ledger's `flush`). */
  written: () => Promise<void>;
  /** Output reserved, and asked for, where nothing else bounds a request's output. */
  defaultOutput: number;
  leaseMs?: number;
  /** The clock leases are on, ms since the epoch; periods follow the clock each request was admitted by. */
  wallClock?: () => number;
  /** This process's name in the holdings; unique per process. */
  processId?: string;
}

/** What a request asks of its owners. */
export interface Ask {
  limits: KeyLimits;
  /** The request's clock, for periods and resets. */
  now: number;
  prompt: number;
  /** Its own output bound, if it has one. */
  output?: number;
}

interface Waiting extends Ask {
  states: OwnerState[];
  resolve: (hold: Hold) => void;
  reject: (error: unknown) => void;
}

interface HoldPart {
  state: OwnerState;
  part: Part;
  /** The owner caps tokens: the billed tokens stay in its share until the ledger wrote them. */
  tokens: boolean;
  /** The owner limits requests in progress: its place is given back at once. */
  places: boolean;
}

/** One admitted request's reservation; settled exactly once, by its account. */
export class Hold {
  #settled = false;

  constructor(
    private readonly onSettle: (hold: Hold, billed: number) => void,
    readonly parts: readonly HoldPart[],
    /** The output ceiling the request was admitted with, when a token cap set one. */
    readonly output: number | undefined,
  ) {}

  /** The request ended, billed `billed` tokens (0 for one refused or failed before any answer). */
  settle(billed: number): void {
    if (this.#settled) return;
    this.#settled = true;
    this.onSettle(this, billed);
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const backoff = (attempt: number) => sleep(Math.random() * Math.min(2 ** attempt, 50));

export class Reservations {
  readonly #kv: Deno.Kv;
  readonly #me: string;
  readonly #leaseMs: number;
  readonly #wall: () => number;
  readonly #owners = new Map<string, OwnerState>();
  /** Asks waiting, by key: while a key's queue exists, a decision for that key is under way. */
  readonly #queues = new Map<string, Waiting[]>();
  /** Work that closing waits for. */
  readonly #running = new Set<Promise<unknown>>();
  /** Sequence numbers of the store reads under way. */
  readonly #reads = new Set<number>();
  #seq = 0;
  /** Billed tokens whose records the ledger has not been asked about yet. */
  #unwritten: [OwnerState, Billed][] = [];
  #timer: ReturnType<typeof setInterval>;
  #closed = false;

  constructor(private readonly options: ReservationOptions) {
    this.#kv = options.kv;
    this.#me = options.processId ?? crypto.randomUUID();
    this.#leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.#wall = options.wallClock ?? Date.now;
    this.#timer = setInterval(() => this.#renew(), this.#leaseMs / 3);
    Deno.unrefTimer(this.#timer);
  }

  /**
   * Reserves for one request of key `keyId`: its hold at once when this process's allowances cover it, else
   * a promise of its hold, rejected with the refusal.
   */
  reserve(keyId: string, ask: Ask): Hold | Promise<Hold> {
    const states = ask.limits.owners.map((o) => this.#state(o));
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
      this.#track(this.#drain(keyId, fresh));
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
      part: { labels, tokens },
      tokens: true,
      places: false,
    }));
    const hold = new Hold((h, billed) => this.#settle(h, billed), parts, output);
    let low = false;
    for (const { state, part } of parts) {
      const allowance = state.allowance;
      allowance.usable -= tokens;
      allowance.touched = true;
      state.hold(hold, part);
      low ||= allowance.low && allowance.claims === 0;
    }
    if (low && !this.#closed) this.#claim(ask, states);
    return hold;
  }

  /** Sizes the allowances of `states` again with the store, in the background, before they run out. */
  #claim(ask: Ask, states: OwnerState[]): void {
    for (const s of states) {
      s.allowance.claims++;
      s.asking++;
    }
    this.#track(
      this.#decide([], ask, states).catch(storeFailure).finally(() => {
        for (const s of states) {
          s.allowance.claims--;
          s.asking--;
        }
      }),
    );
  }

  #state(owner: OwnerLimit): OwnerState {
    const id = counterId(owner.holdings);
    let state = this.#owners.get(id);
    if (!state) this.#owners.set(id, state = new OwnerState(owner.holdings));
    return state;
  }

  #track(work: Promise<unknown>): void {
    this.#running.add(work);
    work.finally(() => this.#running.delete(work));
  }

  /** Decides a key's asks, those that came together at once, until none is left. */
  async #drain(keyId: string, queue: Waiting[]): Promise<void> {
    try {
      while (queue.length) {
        const signature = queue[0].limits.signature;
        const round = queue.filter((w) => w.limits.signature === signature);
        queue.splice(0, queue.length, ...queue.filter((w) => w.limits.signature !== signature));
        try {
          await this.#decide(round, round[0], round[0].states);
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

  /**
   * One read, the decisions, the allowances sized again, one commit; again from the read when another
   * decision got in between. `basis` is the ask the allowances are sized by (the round's first, or the one
   * that found them low); an empty round only sizes them.
   */
  async #decide(round: Waiting[], basis: Ask, states: OwnerState[]): Promise<void> {
    const counters = new Map<string, Deno.KvKey>();
    for (const w of [basis, ...round]) {
      for (const cap of w.limits.caps) counters.set(counterId(cap.counter), cap.counter);
    }
    const keys = [...states.map((s) => s.key), ...counters.values()];
    let released = false;
    for (let attempt = 1;; attempt++) {
      const readAt = ++this.#seq;
      this.#reads.add(readAt);
      const granted: Hold[] = [];
      const growths: [OwnerState, Growth][] = [];
      try {
        const entries = await this.#kv.getMany<unknown[]>(keys);
        const holdings = entries.slice(0, states.length) as Deno.KvEntryMaybe<Holdings>[];
        const stored = new Map<string, number>();
        entries.slice(states.length).forEach((e, i) => {
          const value = e.value as Deno.KvU64 | null;
          stored.set(counterId(keys[states.length + i]), Number(value?.value ?? 0n));
        });
        const wall = this.#wall();
        const others = holdings.map((h) => othersHeld(h.value, this.#me, wall, basis.limits.labels));
        const outcomes = round.map((w) => {
          const outcome = this.#admit(w, others, stored, readAt);
          if (outcome instanceof Hold) granted.push(outcome);
          return outcome;
        });
        const resized = this.#size(round, basis, states, others, stored, readAt, growths);
        if ((granted.length === 0 && !resized) || await this.#commit(states, holdings)) {
          for (const [state, growth] of growths) state.allowance.landed(growth, true);
          // A publish may have shown a hold taken back after a lost race; nothing since wrote the share.
          if (released && granted.length === 0) { for (const state of states) this.#publish(state); }
          round.forEach((w, i) => {
            const outcome = outcomes[i];
            if (outcome instanceof Hold) w.resolve(outcome);
            else w.reject(outcome);
          });
          return;
        }
      } catch (error) {
        for (const hold of granted) this.#release(hold);
        if (granted.length) { for (const state of states) this.#publish(state); }
        throw error;
      } finally {
        // A growth whose commit did not land is not to be used (one that landed is confirmed already).
        for (const [state, growth] of growths) state.allowance.landed(growth, false);
        this.#reads.delete(readAt);
      }
      for (const hold of granted) this.#release(hold);
      released = true;
      if (attempt >= MAX_ATTEMPTS) throw storeFailure(new Error("the holdings kept changing"));
      if (attempt > 1) await backoff(attempt);
    }
  }

  /**
   * Sizes each owner's allowance for the headroom this process may take of its caps once the round's
   * requests are admitted (`allowance.ts`); none where an owner of the key limits requests in progress, since
   * each of its requests goes to the store anyway. True when a share changed beyond what the round holds.
   */
  #size(
    round: Waiting[],
    basis: Ask,
    states: OwnerState[],
    others: OthersHeld[],
    stored: Map<string, number>,
    readAt: number,
    growths: [OwnerState, Growth][],
  ): boolean {
    const { owners, labels } = basis.limits;
    const lendable = owners.every((o) => o.maxConcurrent === undefined);
    const perRequest = Math.max(
      ...[basis, ...round].map((w) => w.prompt + (w.output ?? this.options.defaultOutput)),
    );
    let changed = false;
    owners.forEach((owner, i) => {
      if (owner.caps.length === 0) return;
      const allowance = states[i].allowance;
      let room = Infinity;
      for (const cap of owner.caps) {
        const mine = states[i].mine(cap.period, labels, readAt);
        const settled = (stored.get(counterId(cap.counter)) ?? 0) + mine.billed;
        room = Math.min(room, cap.cap - settled - mine.reserved - others[i].tokens[cap.period]);
      }
      const size = lendable ? allowanceSize(room, others[i].processes + 1, perRequest) : 0;
      const shown = allowance.shown;
      const growth = allowance.resize(size, labels.day, owner.terms);
      if (growth) growths.push([states[i], growth]);
      if (round.length) allowance.touched = true;
      changed ||= growth !== undefined || allowance.shown !== shown;
    });
    return changed;
  }

  /** Publishes this process's shares of `states` if no other decision wrote them since `holdings` was read. */
  async #commit(states: OwnerState[], holdings: Deno.KvEntryMaybe<Holdings>[]): Promise<boolean> {
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

  /**
   * One request's decision against the read holdings and counters, and what this process holds (which
   * includes the places and tokens granted before it in this round): a hold, taken at once, or the refusal.
   */
  #admit(w: Waiting, others: OthersHeld[], stored: Map<string, number>, readAt: number): Hold | GatewayError {
    const { owners, labels } = w.limits;
    for (let i = 0; i < owners.length; i++) {
      const max = owners[i].maxConcurrent;
      if (max !== undefined && others[i].inflight + w.states[i].live.size >= max) {
        return new ConcurrencyLimited(owners[i].title, max);
      }
    }
    let output: number | undefined;
    if (w.limits.caps.length) {
      const rows: { cap: Cap; settled: number; left: number }[] = [];
      owners.forEach((owner, i) => {
        for (const cap of owner.caps) {
          const mine = w.states[i].mine(cap.period, labels, readAt);
          const settled = (stored.get(counterId(cap.counter)) ?? 0) + mine.billed;
          const left = cap.cap - settled - mine.reserved - others[i].tokens[cap.period];
          rows.push({ cap, settled, left });
        }
      });
      const room = Math.min(...rows.map((r) => r.left));
      output = Math.min(w.output ?? this.options.defaultOutput, room - w.prompt);
      if (output < 1) return this.#refusal(w, rows.filter((r) => r.left - w.prompt < 1));
    }
    const reserved = output === undefined ? 0 : w.prompt + output;
    const parts = owners.map((owner, i): HoldPart => {
      const tokens = owner.caps.length > 0;
      return {
        state: w.states[i],
        part: { labels, tokens: tokens ? reserved : 0 },
        tokens,
        places: owner.maxConcurrent !== undefined,
      };
    });
    const hold = new Hold((h, billed) => this.#settle(h, billed), parts, output);
    for (const { state, part } of parts) state.hold(hold, part);
    return hold;
  }

  /** The refusal naming the cap to wait for: one used up that lifts last, else the one with least left. */
  #refusal(w: Waiting, short: { cap: Cap; settled: number; left: number }[]): GatewayError {
    const spent = short.filter((r) => r.settled >= r.cap.cap);
    if (spent.length) {
      const binding = liftsLast(spent, w.now);
      return usedUp(binding.cap, binding.settled, w.now);
    }
    const least = Math.min(...short.map((r) => r.left));
    const binding = liftsLast(short.filter((r) => r.left === least), w.now);
    const inProgress = binding.cap.cap - binding.settled - Math.max(0, binding.left);
    return tooLittleLeft(binding.cap, binding.left, inProgress, w.prompt, w.now);
  }

  /** Takes back a hold whose decision was not committed. */
  #release(hold: Hold): void {
    for (const { state } of hold.parts) state.release(hold);
  }

  #settle(hold: Hold, billed: number): void {
    for (const { state, part, tokens, places } of hold.parts) {
      state.release(hold);
      // What an allowance's request did not bill is its again; the share shows the same total.
      const lending = tokens && state.allowance.lending && state.allowance.day === part.labels.day;
      if (lending) state.allowance.usable += part.tokens - billed;
      if (tokens && billed > 0) {
        const entry: Billed = { labels: part.labels, tokens: billed };
        state.bill(entry);
        this.#unwritten.push([state, entry]);
        // Requests that end close together share one flush of the ledger.
        if (this.#unwritten.length === 1) {
          this.#track(sleep(PUBLISH_DELAY_MS).then(() => this.#awaitWritten()));
        }
      }
      // A place is given back at once; tokens once the ledger wrote them, unless none were billed.
      if (places || (tokens && billed === 0 && !lending)) this.#publish(state);
    }
  }

  /** Waits for the ledger to write the records of the billed tokens settled so far, then publishes. */
  async #awaitWritten(): Promise<void> {
    const batch = this.#unwritten;
    this.#unwritten = [];
    for (let attempt = 1;; attempt++) {
      try {
        await this.options.written();
        break;
      } catch {
        // The ledger keeps the records and tries again; until it wrote them, the share keeps their tokens.
        if (this.#closed) return;
        await sleep(Math.min(100 * attempt, 1000));
      }
    }
    const writtenAt = ++this.#seq;
    for (const [state, entry] of batch) {
      state.written(entry, writtenAt);
      // An allowance's share shows these tokens until its next write: more than it holds, never less.
      if (!state.allowance.lending) this.#publish(state);
    }
  }

  /**
   * Writes this process's current share of `state`'s owner shortly, unless a decision on it wrote it by then:
   * changes that come close together, and the decisions among them, make one write.
   */
  #publish(state: OwnerState): void {
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
    this.#track(work);
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
        console.error("gateway: reservations: cannot publish holdings:", error);
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
      if (state.live.size || state.billed.length || !allowance.empty) {
        state.dirty = true;
        this.#publish(state);
      } else if (state.idle) this.#owners.delete(id);
      else this.#publish(state);
    }
  }

  /** Resolves once the decisions, waits for the ledger and publishes under way are done. */
  async idle(): Promise<void> {
    while (this.#running.size) await Promise.allSettled([...this.#running]);
  }

  /**
   * Stops renewing and takes this process's shares out of the store. Call it after the ledger's last flush, so
   * every billed token is in the counters and nothing is left to hold.
   */
  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.idle();
    this.#closed = true;
    await Promise.all([...this.#owners.values()].map(async (state) => {
      state.giveBack();
      state.prune(this.#seq);
      await this.#write(state);
    }));
  }
}

function storeFailure(error: unknown): StoreUnavailable {
  console.error("gateway: reservations: store failure:", error);
  return new StoreUnavailable("token quotas and concurrency limits", error);
}
