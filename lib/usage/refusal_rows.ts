/**
 * @module Which refusals become rows: those without a key within the key-less budget (`keyless_budget.ts`),
 * those of a key as `refusal_fold.ts` folds them; every other record is a row.
 */
import type { UsageRecord } from "./types.ts";
import type { UsageLedgerOptions } from "./ledger_options.ts";
import { DEFAULT_KEYLESS_PER_MINUTE, isKeylessRefusal, KeylessBudget } from "./keyless_budget.ts";
import { DEFAULT_REFUSALS_PER_MINUTE, isKeyedRefusal, RefusalFold } from "./refusal_fold.ts";

const count = (value: number | undefined, fallback: number) => Math.max(Math.floor(value ?? fallback), 0);

export class RefusalRows {
  readonly #keyless: KeylessBudget;
  readonly #fold: RefusalFold;

  /** `emit` takes a folded row once its minute is over. */
  constructor(options: UsageLedgerOptions, emit: (rec: UsageRecord) => void) {
    const perMinute = count(options.keylessPerMinute, DEFAULT_KEYLESS_PER_MINUTE);
    const notice = options.onNotice ?? ((message) => console.warn(`usage ledger: ${message}`));
    this.#keyless = new KeylessBudget(perMinute, (skipped) =>
      notice(
        `${skipped} refusal(s) without a valid key in the last minute were counted but not recorded ` +
          `(at most ${perMinute} per minute are)`,
      ));
    this.#fold = new RefusalFold(count(options.refusalsPerMinute, DEFAULT_REFUSALS_PER_MINUTE), emit);
  }

  /** Whether `rec` becomes a row now. */
  take(rec: UsageRecord): boolean {
    if (isKeylessRefusal(rec)) return this.#keyless.take();
    return !isKeyedRefusal(rec) || this.#fold.take(rec);
  }

  /** Refusals without a valid key that were counted but not written, since the ledger started. */
  get keylessSkipped(): number {
    return this.#keyless.skipped;
  }

  /** Reports and writes the minute still open (at shutdown). */
  close(): void {
    this.#keyless.close();
    this.#fold.close();
  }
}
