/**
 * @module Counts kept in plain maps and handed to a Prometheus counter when it is scraped. prom-client sorts
 * and hashes the labels of every `inc`, which every request would pay several times over; a scrape pays
 * for each label set once instead.
 */
import type { Counter } from "prom-client";

export class Tally<L extends string> {
  readonly #counts = new Map<string, { labels: Partial<Record<L, string>>; value: number }>();

  /** `id` names the label set (any string that tells them apart); `labels` is made only the first time. */
  add(id: string, labels: () => Partial<Record<L, string>>, value = 1): void {
    const count = this.#counts.get(id);
    if (count) count.value += value;
    else this.#counts.set(id, { labels: labels(), value });
  }

  /** Sets `counter` to the counts (call from its `collect`). */
  report(counter: Counter<L>): void {
    counter.reset();
    for (const { labels, value } of this.#counts.values()) counter.inc(labels, value);
  }
}
