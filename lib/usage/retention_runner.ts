/**
 * @module Retention in the background: a pass (`retention.ts`) shortly after start and then at an interval,
 * one at a time, each said in one log line when it rolled anything up; a stop waits for the step under way.
 */
import { type RetentionReport, rollUpOldRows } from "./retention.ts";

export interface RetentionRunnerOptions {
  /** Rows older than this many days are rolled up; 0 keeps every row. */
  days: number;
  /** Between passes, ms. The first comes after a tenth of it, at most a minute. */
  everyMs: number;
  /** Told what a pass did, when it did anything. */
  onPass?: (report: RetentionReport, ms: number) => void;
  onError?: (error: unknown) => void;
}

export class RetentionRunner {
  #timer: ReturnType<typeof setTimeout> | undefined;
  #running: Promise<void> | undefined;
  readonly #abort = new AbortController();

  constructor(private readonly kv: Deno.Kv, private readonly options: RetentionRunnerOptions) {}

  start(): this {
    if (this.options.days > 0) this.#schedule(Math.min(this.options.everyMs / 10, 60_000));
    return this;
  }

  #schedule(ms: number): void {
    if (this.#abort.signal.aborted) return;
    this.#timer = setTimeout(() => {
      this.#running = this.#pass().finally(() => {
        this.#running = undefined;
        this.#schedule(this.options.everyMs);
      });
    }, ms);
    Deno.unrefTimer(this.#timer);
  }

  async #pass(): Promise<void> {
    const started = performance.now();
    try {
      const report = await rollUpOldRows(this.kv, { days: this.options.days, signal: this.#abort.signal });
      if (report.rows > 0) this.options.onPass?.(report, performance.now() - started);
    } catch (error) {
      (this.options.onError ?? ((e) => console.error("gateway: usage retention:", e)))(error);
    }
  }

  /** Ends the pass under way after its current step; no pass starts afterwards. */
  async stop(): Promise<void> {
    this.#abort.abort();
    clearTimeout(this.#timer);
    await this.#running;
  }
}
