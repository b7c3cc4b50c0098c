/**
 * @module Each server's load as every worker of one process sees it: `start:parallel` runs one gateway per
 * worker, and a server's `--slots` (or learned figure) is what the server runs, not what each worker may send
 * it. The counts live in shared memory, changed with atomics, so a worker's check of a server's free slots
 * counts every worker's requests there, and a slot freed in one worker wakes the wait queue of the others.
 *
 * Servers are found by a 32-bit hash of their name in an open-addressed table, claimed with compare-exchange,
 * so workers agree on a server's place without talking. Two names with one hash (odds of about one in four
 * billion per pair) would share their counts, which errs on the side of sending less.
 */

const CAPACITY = 4096;
/**
 * Per slot: the name's hash (0: free), requests in flight or promised there, requests ended there, and the
 * slots learned for it (0: none yet).
 */
const FIELDS = 4;

/** FNV-1a as a signed 32-bit value, never 0 (a free slot). */
function hash(name: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 16777619);
  return h | 0 || 1;
}

export class SharedLoad {
  readonly #cells: Int32Array;
  /** Bumped whenever a slot frees anywhere; workers wait on it. */
  readonly #freed: Int32Array;
  readonly #index = new Map<string, number>();

  constructor(readonly buffer: SharedArrayBuffer = SharedLoad.allocate()) {
    this.#cells = new Int32Array(buffer, 0, CAPACITY * FIELDS);
    this.#freed = new Int32Array(buffer, CAPACITY * FIELDS * 4, 1);
  }

  static allocate(): SharedArrayBuffer {
    return new SharedArrayBuffer((CAPACITY * FIELDS + 1) * 4);
  }

  /** Requests in flight or promised on `server`, over every worker. */
  load(server: string): number {
    return Atomics.load(this.#cells, this.#at(server) + 1);
  }

  /** Requests ended on `server`, over every worker, ever. */
  ended(server: string): number {
    return Atomics.load(this.#cells, this.#at(server) + 2);
  }

  /** Takes one of `slots` on `server` if any is free, atomically over every worker. */
  claim(server: string, slots: number): boolean {
    const at = this.#at(server) + 1;
    for (let now = Atomics.load(this.#cells, at); now < slots;) {
      const was = Atomics.compareExchange(this.#cells, at, now, now + 1);
      if (was === now) return true;
      now = was;
    }
    return false;
  }

  add(server: string, by: number): void {
    Atomics.add(this.#cells, this.#at(server) + 1, by);
    if (by < 0) {
      Atomics.add(this.#freed, 0, 1);
      Atomics.notify(this.#freed, 0);
    }
  }

  end(server: string): void {
    Atomics.add(this.#cells, this.#at(server) + 2, 1);
  }

  /** The slots a worker last learned for `server`, so all go by one figure; 0 before any did. */
  learned(server: string): number {
    return Atomics.load(this.#cells, this.#at(server) + 3);
  }

  setLearned(server: string, slots: number): void {
    Atomics.store(this.#cells, this.#at(server) + 3, slots);
  }

  /**
   * Calls `freed` after a slot frees in any worker (this one included), until the returned function is called.
   * Waiting is asynchronous: the worker's event loop runs on.
   */
  watch(freed: () => void): () => void {
    let stopped = false;
    const loop = async () => {
      let seen = Atomics.load(this.#freed, 0);
      while (!stopped) {
        const wait = Atomics.waitAsync(this.#freed, 0, seen, 1_000);
        if (wait.async) await wait.value;
        if (stopped) return;
        const now = Atomics.load(this.#freed, 0);
        if (now !== seen) {
          seen = now;
          freed();
        }
      }
    };
    loop();
    return () => void (stopped = true);
  }

  #at(server: string): number {
    const known = this.#index.get(server);
    if (known !== undefined) return known;
    const h = hash(server);
    for (let probe = 0; probe < CAPACITY; probe++) {
      const at = (((h >>> 0) + probe) % CAPACITY) * FIELDS;
      const was = Atomics.compareExchange(this.#cells, at, 0, h);
      if (was === 0 || was === h) {
        this.#index.set(server, at);
        return at;
      }
    }
    throw new Error(`more than ${CAPACITY} servers`);
  }
}
