/**
 * @module The decision with the store: what a round of requests is granted, a hold or a refusal, and how
 * large this process's allowances may be, from one snapshot of the owners' holdings and token counters.
 *
 * A decision reads the holdings record of each owner and its token counters in one `getMany` (one snapshot),
 * and commits the process's new share with a check of the record's versionstamp, so two decisions on one
 * owner anywhere are serialised: the later one reads again. The counters need no check: tokens reach them only
 * from the ledger, while the process that billed them still shows them in its share, and it drops them from
 * its share only after the write; a snapshot therefore counts each token at least once. A process counts its
 * own part from memory (`owner_state.ts`), which is exact at once, and the others' from the snapshot; of its
 * billed tokens, only those whose records the snapshot's counters do not hold yet, as the ledger's mark read
 * in the same snapshot says.
 *
 * Decisions where the spec is silent. A request whose output does not fit is admitted with its output ceiling
 * lowered to what the caps still allow (`num_predict` / `max_tokens` is set to it); it is refused (429
 * `quota_exceeded`) only when not one output token fits beside its prompt. A request that names no bound and
 * whose key has no `--max-predict` reserves, and is limited to, the configured default output.
 */
import { ConcurrencyLimited, type GatewayError, StoreUnavailable } from "../errors.ts";
import { StoreUnreachable } from "../store/link.ts";
import { counterId } from "../usage/kv_layout.ts";
import { allowanceSize, type Growth } from "./allowance.ts";
import type { Holdings, OthersHeld } from "./holdings.ts";
import { LivePart, type OwnerState } from "./owner_state.ts";
import { type Cap, type KeyLimits, liftsLast, tooLittleLeft, usedUp } from "./quotas.ts";
import { backoff, MAX_ATTEMPTS, type Shares } from "./shares.ts";

/** What a request asks of its owners. */
export interface Ask {
  limits: KeyLimits;
  /** The request's clock, for periods and resets. */
  now: number;
  prompt: number;
  /** Its own output bound, if it has one. */
  output?: number;
}

export interface Waiting extends Ask {
  states: OwnerState[];
  resolve: (hold: Hold) => void;
  reject: (error: unknown) => void;
}

export interface HoldPart {
  state: OwnerState;
  part: LivePart;
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

export interface DecisionOptions {
  kv: Deno.Kv;
  shares: Shares;
  /** Output reserved, and asked for, where nothing else bounds a request's output. */
  defaultOutput: number;
  /** What a hold granted here does when its request ends. */
  settle: (hold: Hold, billed: number) => void;
}

export class Decisions {
  readonly #kv: Deno.Kv;
  readonly #shares: Shares;

  constructor(private readonly options: DecisionOptions) {
    this.#kv = options.kv;
    this.#shares = options.shares;
  }

  /**
   * One read, the decisions, the allowances sized again, one commit; again from the read when another
   * decision got in between. `basis` is the ask the allowances are sized by (the round's first, or the one
   * that found them low); an empty round only sizes them.
   */
  async decide(round: Waiting[], basis: Ask, states: OwnerState[]): Promise<void> {
    const counters = new Map<string, Deno.KvKey>();
    for (const w of [basis, ...round]) {
      for (const cap of w.limits.caps) counters.set(counterId(cap.counter), cap.counter);
    }
    // The ledger's mark comes last, read in the same snapshot as the counters it describes.
    const keys = [...states.map((s) => s.key), ...counters.values(), this.#shares.markKey];
    let released = false;
    for (let attempt = 1;; attempt++) {
      const readAt = this.#shares.readStart();
      const granted: Hold[] = [];
      const growths: [OwnerState, Growth][] = [];
      try {
        const entries = await this.#kv.getMany<unknown[]>(keys);
        const holdings = entries.slice(0, states.length) as Deno.KvEntryMaybe<Holdings>[];
        const stored = new Map<string, number>();
        const mark = entries.pop()!.value as Deno.KvU64 | null;
        const counted = Number(mark?.value ?? 0n);
        entries.slice(states.length).forEach((e, i) => {
          const value = e.value as Deno.KvU64 | null;
          stored.set(counterId(keys[states.length + i]), Number(value?.value ?? 0n));
        });
        const others = this.#shares.others(holdings, basis.limits.labels);
        const outcomes = round.map((w) => {
          const outcome = this.#admit(w, others, stored, counted);
          if (outcome instanceof Hold) granted.push(outcome);
          return outcome;
        });
        const resized = this.#size(round, basis, states, others, stored, counted, growths);
        if ((granted.length === 0 && !resized) || await this.#shares.commit(states, holdings)) {
          for (const [state, growth] of growths) state.allowance.landed(growth, true);
          // A publish may have shown a hold taken back after a lost race; nothing since wrote the share.
          if (released && granted.length === 0) { for (const state of states) this.#shares.publish(state); }
          round.forEach((w, i) => {
            const outcome = outcomes[i];
            if (outcome instanceof Hold) w.resolve(outcome);
            else w.reject(outcome);
          });
          return;
        }
      } catch (error) {
        for (const hold of granted) this.#release(hold);
        if (granted.length) { for (const state of states) this.#shares.publish(state); }
        throw error;
      } finally {
        // A growth whose commit did not land is not to be used (one that landed is confirmed already).
        for (const [state, growth] of growths) state.allowance.landed(growth, false);
        this.#shares.readDone(readAt);
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
    counted: number,
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
        const mine = states[i].mine(cap.period, labels, counted);
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

  /**
   * One request's decision against the read holdings and counters, and what this process holds (which
   * includes the places and tokens granted before it in this round): a hold, taken at once, or the refusal.
   */
  #admit(
    w: Waiting,
    others: OthersHeld[],
    stored: Map<string, number>,
    counted: number,
  ): Hold | GatewayError {
    const { owners, labels } = w.limits;
    for (let i = 0; i < owners.length; i++) {
      const max = owners[i].maxConcurrent;
      if (max !== undefined && others[i].inflight + w.states[i].running >= max) {
        return new ConcurrencyLimited(owners[i].title, max);
      }
    }
    let output: number | undefined;
    if (w.limits.caps.length) {
      const rows: { cap: Cap; settled: number; left: number }[] = [];
      owners.forEach((owner, i) => {
        for (const cap of owner.caps) {
          const mine = w.states[i].mine(cap.period, labels, counted);
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
        part: new LivePart(labels, tokens ? reserved : 0),
        tokens,
        places: owner.maxConcurrent !== undefined,
      };
    });
    const hold = new Hold(this.options.settle, parts, output);
    for (const { state, part } of parts) state.hold(part);
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
    for (const { state, part } of hold.parts) state.release(part);
  }
}

export function storeFailure(error: unknown): StoreUnavailable {
  // A network store that did not answer in time: its link said so once; each refusal need not.
  if (!(error instanceof StoreUnreachable)) console.error("gateway: reservations: store failure:", error);
  return new StoreUnavailable("token quotas and concurrency limits", error);
}
