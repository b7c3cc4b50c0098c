/**
 * @module Several processes on one SQLite store file (two gateways, a gateway and the admin CLI) make SQLite
 * refuse a transaction with "database is locked" when it must turn a read (an atomic `check`) into a write
 * while another process writes: SQLite does not wait in that case, it fails at once. Such a commit applied
 * nothing, so it is safe to try again; this wraps a store so that reads and commits retry, with jittered
 * backoff, for a few seconds before giving up.
 */

const LOCKED = /database (table )?is locked|SQLITE_BUSY/i;
const MAX_ATTEMPTS = 60;

function isLocked(error: unknown): boolean {
  return error instanceof Error && LOCKED.test(error.message);
}

export async function retryWhileLocked<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 1;; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (attempt >= MAX_ATTEMPTS || !isLocked(error)) throw error;
      const ceiling = Math.min(100, 2 ** attempt);
      await new Promise((resolve) => setTimeout(resolve, ceiling / 2 + Math.random() * ceiling / 2));
    }
  }
}

/** The same store, with `get`, `getMany` and every atomic commit retried while the file is locked. */
export function withLockRetry(kv: Deno.Kv): Deno.Kv {
  return new Proxy(kv, {
    get(target, prop) {
      if (prop === "get" || prop === "getMany") {
        const read = (target[prop] as (...args: unknown[]) => Promise<unknown>).bind(target);
        return (...args: unknown[]) => retryWhileLocked(() => read(...args));
      }
      if (prop === "atomic") {
        return () => {
          const op = target.atomic();
          const commit = op.commit.bind(op);
          op.commit = () => retryWhileLocked(commit);
          return op;
        };
      }
      const value = Reflect.get(target, prop);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
