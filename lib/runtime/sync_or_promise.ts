/**
 * @module Answers that are usually at hand. Authentication, admission and placement answer from what the
 * process holds, and return a promise only when they must wait (a store read, a queue): a value of type
 * `SyncOrPromise<T>`. Awaiting a value that is no promise still costs a turn of the microtask queue, which a
 * chat request would pay three times over, so the caller awaits only what is pending:
 * `const key = isPending(found) ? await found : found`. `isPending` is the one test for it, a type guard, so
 * the synchronous path stays free of promises and awaits.
 */

export type SyncOrPromise<T> = T | Promise<T>;

/** Whether `value` is still to come (a promise), rather than the answer itself. */
export function isPending<T>(value: SyncOrPromise<T>): value is Promise<T> {
  return value instanceof Promise;
}
