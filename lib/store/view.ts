/**
 * @module The gateway's read side of the store. Servers, clusters and users are few and read on every
 * request, so they live in memory as a snapshot; keys are many, so they are read one at a time through the
 * digest index and cached. When the store's generation changes (every admin write bumps it), which a poll
 * notices within `reloadIntervalMs`, across processes and on KV Connect alike, the snapshot is read again and
 * so are the cached keys, before either is replaced: a request never waits for that reload, and a revoked key
 * is refused from the moment it is done.
 *
 * The poll is also the store's probe (`link.ts`): its round trip is the figure /metrics shows, and a poll the
 * store does not answer in time marks the store down. While it is down, a key found in memory is served as
 * usual and one that is not gets 503 `store_unavailable` at once.
 */
import { StoreUnavailable } from "../errors.ts";
import { KV_KEYS, readGeneration } from "./kv.ts";
import { byDigest, findKeyByDigest, secretValid } from "./keys.ts";
import { StoreLink, StoreUnreachable } from "./link.ts";
import { logConfigChange } from "../log/config_change.ts";
import type { ClusterRecord, KeyRecord, ServerRecord, UserRecord } from "./records.ts";

/** Bounds memory when clients present many distinct (mostly invalid) keys. */
const KEY_CACHE_LIMIT = 50_000;
/**
 * Known keys read again at a reload, the latest looked up first; the others are dropped and read again when
 * next presented. Ten keys a read, all reads at once: a reload stays a few round trips long.
 */
const RELOADED_KEYS = 2_000;

export interface Snapshot {
  servers: ReadonlyMap<string, ServerRecord>;
  clusters: ReadonlyMap<string, ClusterRecord>;
  users: ReadonlyMap<string, UserRecord>;
}

async function readPrefix<T extends { name: string }>(kv: Deno.Kv, prefix: string) {
  const out = new Map<string, T>();
  for await (const entry of kv.list<T>({ prefix: [prefix] })) out.set(entry.value.name, entry.value);
  return out;
}

/** The current records of `digests` (null: no key), ten a read, all reads at once. */
async function readKeys(kv: Deno.Kv, digests: string[]): Promise<Map<string, KeyRecord | null>> {
  const chunks: string[][] = [];
  for (let i = 0; i < digests.length; i += 10) chunks.push(digests.slice(i, i + 10));
  const read = await Promise.all(chunks.map((chunk) => kv.getMany<KeyRecord[]>(chunk.map(byDigest))));
  const out = new Map<string, KeyRecord | null>();
  read.flat().forEach((entry, i) => out.set(digests[i], entry.value));
  return out;
}

const unavailable = (error: unknown): never => {
  throw error instanceof StoreUnreachable ? new StoreUnavailable("API key", error) : error;
};

export class StoreView {
  #snapshot: Snapshot = { servers: new Map(), clusters: new Map(), users: new Map() };
  #keys = new Map<string, KeyRecord | null>();
  /** Lookups under way, by digest: requests that arrive together with a key not cached share one read. */
  readonly #reading = new Map<string, Promise<KeyRecord | null>>();
  /** Advances on every reload so a lookup that raced a reload does not cache stale data. */
  #epoch = 0;
  #generation = -1n;
  #timer?: ReturnType<typeof setInterval>;
  #polling = false;

  /** `now` is the gateway's clock (`deps.now`): a rotated secret's grace ends by it, to the millisecond. */
  private constructor(
    readonly kv: Deno.Kv,
    private readonly now: () => number,
    readonly link: StoreLink,
  ) {}

  /** `link`: the store's, shared with what else waits for the store; by default one for a local store. */
  static async open(
    kv: Deno.Kv,
    reloadIntervalMs: number,
    now: () => number = Date.now,
    link = new StoreLink({ remote: false, timeoutMs: Infinity }),
  ): Promise<StoreView> {
    const view = new StoreView(kv, now, link);
    await view.refresh();
    view.#timer = setInterval(() => view.#poll(), reloadIntervalMs);
    Deno.unrefTimer(view.#timer as unknown as number);
    return view;
  }

  get snapshot(): Snapshot {
    return this.#snapshot;
  }

  /** Re-reads everything if the generation moved; returns whether it did. */
  async refresh(): Promise<boolean> {
    const generation = await this.link.probe(() => readGeneration(this.kv));
    if (generation === this.#generation) return false;
    // Digests with no key stay so: a secret is made with its key, never presented before it exists.
    const known = [...this.#keys].filter(([, record]) => record !== null).map(([digest]) => digest);
    // Watched like the probe: a store that stops answering during a reload is taken for down all the same.
    const [servers, clusters, users, keys] = await this.link.probe(() =>
      Promise.all([
        readPrefix<ServerRecord>(this.kv, KV_KEYS.servers),
        readPrefix<ClusterRecord>(this.kv, KV_KEYS.clusters),
        readPrefix<UserRecord>(this.kv, KV_KEYS.users),
        readKeys(this.kv, known.slice(-RELOADED_KEYS)),
      ]), false);
    for (const [digest, record] of this.#keys) if (record === null) keys.set(digest, null);
    // The first read is the start, which the start line tells of; later ones are admin changes.
    if (this.#generation !== -1n) {
      logConfigChange(generation, { ...this.#snapshot, keys: this.#keys }, {
        servers,
        clusters,
        users,
        keys,
      });
    }
    this.#snapshot = { servers, clusters, users };
    this.#keys = keys;
    // A lookup begun before the change may have read what it changed: later requests read afresh.
    this.#reading.clear();
    this.#epoch++;
    this.#generation = generation;
    return true;
  }

  async #poll(): Promise<void> {
    if (this.#polling) return;
    this.#polling = true;
    try {
      await this.refresh();
    } catch {
      // A transient store error keeps the last snapshot; the next tick tries again.
    } finally {
      this.#polling = false;
    }
  }

  /**
   * The key `digest` authenticates as now, or null; without a wait when it was looked up before. The cache
   * holds what the index holds; whether a previous secret's grace is over is decided at every lookup, so a
   * cached entry cannot outlive it.
   */
  findKey(digest: string): KeyRecord | null | Promise<KeyRecord | null> {
    const record = this.#keys.get(digest);
    if (record !== undefined) return this.#valid(record, digest);
    let reading = this.#reading.get(digest);
    if (!reading) {
      // While the store is down a new lookup is not even started: it would wait in the client till it is back.
      if (!this.link.up) unavailable(new StoreUnreachable(this.link.timeoutMs));
      const started = reading = this.#lookUp(digest);
      this.#reading.set(digest, started);
      const done = () => {
        if (this.#reading.get(digest) === started) this.#reading.delete(digest);
      };
      started.then(done, done);
    }
    return this.link.bound(reading).then((found) => this.#valid(found, digest), unavailable);
  }

  async #lookUp(digest: string): Promise<KeyRecord | null> {
    const epoch = this.#epoch;
    const record = await findKeyByDigest(this.kv, digest);
    if (epoch === this.#epoch) {
      if (this.#keys.size >= KEY_CACHE_LIMIT) this.#keys.delete(this.#keys.keys().next().value!);
      this.#keys.set(digest, record);
    }
    return record;
  }

  #valid(record: KeyRecord | null, digest: string): KeyRecord | null {
    return record && secretValid(record, digest, this.now()) ? record : null;
  }

  close(): void {
    clearInterval(this.#timer);
  }
}
