/**
 * @module The gateway's link to its store: whether the store answers (up or down), how long a round trip
 * takes, and a time limit for the store operations a request waits for.
 *
 * Why a limit. Deno's client for a network store (KV Connect) never fails a read or a write the store does
 * not answer: it tries again about every 200 ms until the store is back. A request waiting for one would wait
 * for the whole outage. So on a network store every operation a request waits for is raced against
 * `timeoutMs`: past it the store counts as down and the request gets `StoreUnreachable`; while it is down,
 * such operations fail at once instead of piling up in the client. The operation itself goes on in the client
 * and may still land once the store is back; its callers are written so that a late landing changes nothing
 * twice (see the rate limit and the ledger).
 *
 * The views' poll of the store's generation (`view.ts`) is the probe: each read's time is the round trip; one
 * that takes longer than the limit marks the store down, and its answer, whenever it comes, marks it up.
 * A local store file has no network to fail: its operations are not raced, and a request pays nothing here.
 */

export type StoreState = "up" | "down";

/**
 * Whether the configured store is across a network: a KV Connect URL, or (without one) the platform's store
 * under the Deploy profile. A path, or nothing outside that profile, is a local file.
 */
export function isNetworkStore(kvPath: string | undefined, deployProfile: boolean): boolean {
  return kvPath === undefined ? deployProfile : /^https?:\/\//.test(kvPath);
}

/** The store did not answer in time, or is known to be down: the caller refuses what needs it. */
export class StoreUnreachable extends Error {
  constructor(timeoutMs: number) {
    super(`The store did not answer within ${timeoutMs} ms`);
    this.name = "StoreUnreachable";
  }
}

export interface StoreStatus {
  state: StoreState;
  /** "network" for a KV Connect or platform store, "local" for a file. */
  kind: "network" | "local";
  /** The last probe's round trip, ms; undefined before the first. */
  roundTripMs?: number;
  /** When the store went down (ISO 8601), while it is. */
  downSince?: string;
  /** Times the store went down since the gateway started. */
  outages: number;
}

export interface StoreLinkOptions {
  /** A network store (KV Connect, Deno Deploy): operations are raced against `timeoutMs`. */
  remote: boolean;
  timeoutMs: number;
  /** Told when the store goes down and when it is back. Default: console.error / console.log. */
  onChange?: (state: StoreState, message: string) => void;
  /** Told of each probe read that took longer than `slowMs` (default: never), with its time in ms. */
  slowMs?: number;
  onSlow?: (ms: number) => void;
  now?: () => number;
}

export class StoreLink {
  readonly remote: boolean;
  readonly timeoutMs: number;
  #state: StoreState = "up";
  #roundTripMs: number | undefined;
  #downSince = 0;
  #outages = 0;
  #waiters: (() => void)[] = [];
  readonly #onChange: (state: StoreState, message: string) => void;
  readonly #now: () => number;
  readonly #slowMs: number;
  readonly #onSlow?: (ms: number) => void;

  constructor(options: StoreLinkOptions) {
    this.remote = options.remote;
    this.#slowMs = options.slowMs ?? Infinity;
    this.#onSlow = options.onSlow;
    this.timeoutMs = options.timeoutMs;
    this.#now = options.now ?? Date.now;
    this.#onChange = options.onChange ?? ((state, message) => {
      if (state === "down") console.error(`gateway: store: ${message}`);
      else console.log(`gateway: store: ${message}`);
    });
  }

  get up(): boolean {
    return this.#state === "up";
  }

  status(): StoreStatus {
    return {
      state: this.#state,
      kind: this.remote ? "network" : "local",
      roundTripMs: this.#roundTripMs,
      downSince: this.#state === "down" ? new Date(this.#downSince).toISOString() : undefined,
      outages: this.#outages,
    };
  }

  /** Resolves once the store is up (at once if it is). */
  whenUp(): Promise<void> {
    if (this.up) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  /**
   * `operation` as a request may wait for it: on a network store, rejected with `StoreUnreachable` at once
   * while the store is down, or once it has taken `timeoutMs`; on a local store, itself.
   */
  bound<T>(operation: Promise<T>): Promise<T> {
    if (!this.remote) return operation;
    if (!this.up) {
      // The caller gives up on it; it may still settle, and must not be reported unhandled then.
      operation.catch(() => {});
      return Promise.reject(new StoreUnreachable(this.timeoutMs));
    }
    return this.#race(operation);
  }

  /** `work` started only while the store is up (else `StoreUnreachable` at once), then bounded. */
  attempt<T>(work: () => Promise<T>): Promise<T> {
    if (!this.remote) return work();
    if (!this.up) return Promise.reject(new StoreUnreachable(this.timeoutMs));
    return this.#race(work());
  }

  /**
   * The store with its reads (`get`, `getMany`) and commits made through `attempt`, for what a request waits
   * for; on a local store, the store itself.
   */
  wrap(kv: Deno.Kv): Deno.Kv {
    if (!this.remote) return kv;
    const attempt = <T>(work: () => Promise<T>) => this.attempt(work);
    return new Proxy(kv, {
      get(target, prop) {
        if (prop === "get" || prop === "getMany") {
          const read = (target[prop] as (...args: unknown[]) => Promise<unknown>).bind(target);
          return (...args: unknown[]) => attempt(() => read(...args));
        }
        if (prop === "atomic") {
          return () => {
            const op = target.atomic();
            const commit = op.commit.bind(op);
            op.commit = () => attempt(commit);
            return op;
          };
        }
        const value = Reflect.get(target, prop);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  }

  #race<T>(operation: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        operation.catch(() => {});
        this.#markDown(`no answer within ${this.timeoutMs} ms`);
        reject(new StoreUnreachable(this.timeoutMs));
      }, this.timeoutMs);
      operation.then(
        (value) => {
          clearTimeout(timer);
          resolve(value);
        },
        (error) => {
          clearTimeout(timer);
          reject(error);
        },
      );
    });
  }

  /**
   * Times one probe read of the store. It is waited for however long it takes (Deno's client keeps trying);
   * past `timeoutMs` the store is marked down, and the answer marks it up again. A probe that fails marks it
   * down too. Returns what the read returned, or rethrows its error. `roundTrip`: the read is one round trip,
   * whose time is the figure `status()` shows (not so for several reads at once).
   */
  async probe<T>(read: () => Promise<T>, roundTrip = true): Promise<T> {
    const started = performance.now();
    let late = false;
    const timer = this.remote
      ? setTimeout(() => {
        late = true;
        this.#markDown(`no answer within ${this.timeoutMs} ms`);
      }, this.timeoutMs)
      : undefined;
    try {
      const value = await read();
      const ms = performance.now() - started;
      if (!late && roundTrip) this.#roundTripMs = ms;
      if (ms > this.#slowMs) this.#onSlow?.(ms);
      this.#markUp();
      return value;
    } catch (error) {
      if (this.remote) this.#markDown(error instanceof Error ? error.message : String(error));
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  #markDown(why: string): void {
    if (this.#state === "down") return;
    this.#state = "down";
    this.#downSince = this.#now();
    this.#outages++;
    this.#report("down", `unreachable (${why}); limits that need it are refused or allowed as configured`);
  }

  #markUp(): void {
    if (this.#state === "up") return;
    this.#state = "up";
    const seconds = ((this.#now() - this.#downSince) / 1000).toFixed(1);
    this.#report("up", `reachable again after ${seconds} s`);
    for (const resolve of this.#waiters.splice(0)) resolve();
  }

  #report(state: StoreState, message: string): void {
    try {
      this.#onChange(state, message);
    } catch {
      // A failing reporter must not change what the gateway does.
    }
  }
}
