/**
 * @module Token totals as they stand right now, for the quota check, without a store read per request.
 *
 * A total is the counter as last known from the store plus what this process recorded that is not written
 * yet, which the ledger keeps summed per counter in its unwritten batches and is asked for (`PendingTokens`)
 * only when a total is looked at: recording a request costs nothing here. The store value comes from two sources, and the newer one (by versionstamp) wins: the ledger's own
 * commits (it knows the total it wrote, and the check in its commit makes that total exact, whoever else
 * writes the counter) and reads of the counter, which bring in what other processes wrote.
 *
 * The one trap is counting a batch twice: a read can already contain a batch whose commit has not returned
 * yet, while that batch is still counted as unwritten. So a read is used only if no commit touching that
 * counter was in flight while it ran; otherwise the ledger's own commit result brings the value instead. The
 * ledger drops a batch from its unwritten ones in the same turn as it reports the commit (`committed`).
 *
 * Within one process totals are therefore exact at every instant. Tokens of other processes arrive with
 * their ledger's next group commit plus the next read here (see `QuotaCheck` for when reads happen).
 */
import type { CounterDelta } from "./counter_sums.ts";
import { counterId, readCounters, TOKENS_PREFIX, type TotalsScope } from "./kv_layout.ts";

/** A ledger's tokens recorded and not yet written, for the counter `["tokens", scope, owner, label]`. */
export interface PendingTokens {
  pending(scope: TotalsScope, owner: string, label: string): number;
}

/** What the ledger tells about its counters; see the module comment for why each event matters. */
export interface CounterObserver {
  /** Called once by a ledger as it starts: where its unwritten tokens are looked up. */
  attach(source: PendingTokens): void;
  committing(counters: readonly CounterDelta[]): void;
  /** `totals[i]` is what `counters[i]` now holds, or undefined when the commit was confirmed only afterwards. */
  committed(
    counters: readonly CounterDelta[],
    totals: readonly (bigint | undefined)[],
    versionstamp: string,
  ): void;
  /** The commit did not happen (for now); the counters stay queued. */
  abandoned(counters: readonly CounterDelta[]): void;
}

interface Entry {
  /** The counter in the store at `versionstamp`; undefined until known. */
  stored?: number;
  versionstamp: string;
  /** When `stored` was last confirmed current (a read or a commit), ms on the local clock. */
  seenAt: number;
  /** Commits in flight touching this counter, and a change count so a read can tell it overlapped one. */
  inFlight: number;
  changes: number;
}

export interface Total {
  tokens: number;
  /** Milliseconds since the store value was last confirmed; Infinity when it never was. */
  ageMs: number;
}

/** How long an entry nobody asked about is kept. */
const IDLE_MS = 10 * 60_000;

export class LiveTotals implements CounterObserver {
  readonly #entries = new Map<string, Entry>();
  readonly #sources: PendingTokens[] = [];
  #lastSweep = 0;

  constructor(private readonly kv: Deno.Kv, private readonly clock: () => number = () => performance.now()) {}

  /**
   * Ids of the keys asked about, by the key array: the quota check asks with the same arrays all day, and
   * joining their parts again on every request would cost a string, and the map a hash of it.
   */
  readonly #ids = new WeakMap<Deno.KvKey, string>();

  #entry(key: Deno.KvKey): Entry {
    let id = this.#ids.get(key);
    if (id === undefined) this.#ids.set(key, id = counterId(key));
    return this.#entryById(id);
  }

  #entryById(id: string): Entry {
    let entry = this.#entries.get(id);
    if (!entry) {
      entry = { versionstamp: "", seenAt: -Infinity, inFlight: 0, changes: 0 };
      this.#entries.set(id, entry);
    }
    return entry;
  }

  /** The total of each counter as known now, without touching the store. */
  peek(keys: readonly Deno.KvKey[]): Total[] {
    const now = this.clock();
    this.#sweep(now);
    return keys.map((key) => {
      const entry = this.#entry(key);
      return {
        tokens: (entry.stored ?? 0) + this.#unwritten(key),
        ageMs: entry.stored === undefined ? Infinity : now - entry.seenAt,
      };
    });
  }

  /** Tokens of `key` that the ledgers recorded and have not written yet. */
  #unwritten(key: Deno.KvKey): number {
    const [prefix, scope, owner, label] = key;
    if (prefix !== TOKENS_PREFIX || (scope !== "key" && scope !== "user")) return 0;
    if (typeof owner !== "string" || typeof label !== "string") return 0;
    let tokens = 0;
    for (const source of this.#sources) tokens += source.pending(scope, owner, label);
    return tokens;
  }

  /** Reads the counters from the store (one round trip per ten) and takes in what is safe to take. */
  async read(keys: readonly Deno.KvKey[]): Promise<void> {
    const entries = keys.map((key) => this.#entry(key));
    const before = entries.map((e) => e.changes);
    const read = await readCounters(this.kv, keys);
    const now = this.clock();
    read.forEach((row, i) => {
      const entry = entries[i];
      if (entry.inFlight > 0 || entry.changes !== before[i]) return;
      this.#observe(entry, Number(row.value?.value ?? 0n), row.versionstamp ?? "", now);
    });
  }

  #observe(entry: Entry, stored: number, versionstamp: string, now: number): void {
    if (entry.stored === undefined || versionstamp >= entry.versionstamp) {
      entry.stored = stored;
      entry.versionstamp = versionstamp;
    }
    entry.seenAt = now;
  }

  attach(source: PendingTokens): void {
    this.#sources.push(source);
  }

  committing(counters: readonly CounterDelta[]): void {
    for (const c of counters) {
      const entry = this.#entryById(c.id);
      entry.inFlight++;
      entry.changes++;
    }
  }

  committed(
    counters: readonly CounterDelta[],
    totals: readonly (bigint | undefined)[],
    versionstamp: string,
  ): void {
    const now = this.clock();
    counters.forEach((c, i) => {
      const entry = this.#entryById(c.id);
      entry.inFlight--;
      entry.changes++;
      const total = totals[i];
      if (total !== undefined) this.#observe(entry, Number(total), versionstamp, now);
      // Without the total the stored value is behind by this batch: forget it so the next check reads.
      else entry.stored = undefined;
    });
  }

  abandoned(counters: readonly CounterDelta[]): void {
    for (const c of counters) {
      const entry = this.#entryById(c.id);
      entry.inFlight--;
      entry.changes++;
    }
  }

  /** Drops entries of past periods and of keys no longer used, so memory follows the active keys. */
  #sweep(now: number): void {
    if (now - this.#lastSweep < 60_000) return;
    this.#lastSweep = now;
    for (const [id, entry] of this.#entries) {
      // Unwritten tokens live in the ledger, so an entry dropped here loses only its stored value.
      if (entry.inFlight === 0 && now - entry.seenAt > IDLE_MS) {
        this.#entries.delete(id);
      }
    }
  }
}
