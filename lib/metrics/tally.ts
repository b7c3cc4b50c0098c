/**
 * @module Counts kept in plain maps and handed to a Prometheus counter when it is scraped. prom-client sorts
 * and hashes the labels of every `inc`, which every request would pay several times over; a scrape pays
 * for each label set once instead.
 */
import type { Registry } from "prom-client";

export type PromClient = typeof import("prom-client");

export interface TallyOptions<L extends string> {
  name: string;
  help: string;
  labelNames: readonly L[];
}

export class Tally<L extends string> {
  readonly #counts = new Map<string, { labels: Partial<Record<L, string>>; value: number }>();

  constructor(private readonly options: TallyOptions<L>) {}

  /** Registers the counter the counts are reported through, once a registry is made (the first scrape). */
  register(prom: PromClient, registry: Registry): void {
    const counts = this.#counts;
    new prom.Counter<L>({
      ...this.options,
      registers: [registry],
      collect() {
        this.reset();
        for (const { labels, value } of counts.values()) this.inc(labels, value);
      },
    });
  }

  /** `id` names the label set (any string that tells them apart); `labels` is made only the first time. */
  add(id: string, labels: () => Partial<Record<L, string>>, value = 1): void {
    const count = this.#counts.get(id);
    if (count) count.value += value;
    else this.#counts.set(id, { labels: labels(), value });
  }
}
