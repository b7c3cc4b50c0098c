/**
 * @module Who waits for the ledger, and for which record: each wait resolves once the records written reach
 * its number, and all are rejected together when a write fails or the ledger gives up. An urgent wait (a
 * flush) makes the batch being filled due at once; a patient one (`whenWritten`) leaves it to fill.
 */
interface Waiter {
  target: number;
  urgent: boolean;
  resolve: () => void;
  reject: (error: unknown) => void;
}

export class FlushWaiters {
  readonly #waiters: Waiter[] = [];
  #urgent = 0;

  /** Some wait wants the open batch written now. */
  get urgent(): boolean {
    return this.#urgent > 0;
  }

  /** Resolves once `written` reaches `target` (see `settle`). */
  add(target: number, urgent: boolean): Promise<void> {
    if (urgent) this.#urgent++;
    return new Promise<void>((resolve, reject) => this.#waiters.push({ target, urgent, resolve, reject }));
  }

  /** Resolves the waits that `written` records satisfy. */
  settle(written: number): void {
    for (let i = this.#waiters.length - 1; i >= 0; i--) {
      const waiter = this.#waiters[i];
      if (waiter.target <= written) {
        this.#waiters.splice(i, 1);
        if (waiter.urgent) this.#urgent--;
        waiter.resolve();
      }
    }
  }

  /** Rejects every wait with `error`. */
  rejectAll(error: unknown): void {
    this.#urgent = 0;
    for (const waiter of this.#waiters.splice(0)) waiter.reject(error);
  }
}
