/**
 * @module Waiting for an event instead of for time: a condition polled until it holds, or a promise, each
 * within a generous limit. The limit only stops a failing test from waiting forever; no test passes or fails
 * by how fast things went, so a loaded two-core machine is slower but not red.
 */

/** How long a test waits for something that must happen: far beyond what it takes on a loaded machine. */
export const PATIENCE_MS = 30_000;

/**
 * Polls `probe` (which may be async) until it gives something other than undefined, null or false, and
 * returns that; throws, naming `what`, if that has not happened within `limitMs`.
 */
export async function eventually<T>(
  what: string,
  probe: () => T | Promise<T>,
  limitMs = PATIENCE_MS,
): Promise<Exclude<T, undefined | null | false>> {
  const deadline = performance.now() + limitMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== null && value !== false) {
      return value as Exclude<T, undefined | null | false>;
    }
    if (performance.now() > deadline) throw new Error(`timed out after ${limitMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Returns once the current UTC minute has at least `marginMs` left, waiting for the next one if not: a burst
 * against a per-minute limit that straddled two minutes would meet two budgets.
 */
export async function clearOfMinuteEnd(marginMs = 20_000): Promise<void> {
  const left = 60_000 - Date.now() % 60_000;
  if (left < marginMs) await new Promise((resolve) => setTimeout(resolve, left + 100));
}

/** `promise`'s outcome; throws, naming `what`, if it has not settled within `limitMs`. */
export async function within<T>(what: string, promise: Promise<T>, limitMs = PATIENCE_MS): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${limitMs} ms waiting for ${what}`)), limitMs);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}
