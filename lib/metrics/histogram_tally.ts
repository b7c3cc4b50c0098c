/**
 * @module A Prometheus histogram that costs a request one array increment. prom-client's `Histogram` checks,
 * sorts and hashes the labels and looks the bucket up in a keyed object on every `observe`, a few
 * microseconds that every request paid; here a label set is found by an id the caller already has, the
 * bucket by a scan of a few numbers, and the registry still formats the scrape as it does for its own
 * histograms (cumulative `_bucket` series with `le`, then `_sum` and `_count`).
 */
import type { Registry } from "prom-client";

interface Series<L extends string> {
  labels: Record<L, string>;
  /** Observations per bucket, not cumulative; the last one is `+Inf`. */
  counts: number[];
  sum: number;
  count: number;
}

export class HistogramTally<L extends string> {
  readonly type = "histogram";
  readonly aggregator = "sum";
  readonly #series = new Map<string, Series<L>>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly buckets: readonly number[],
  ) {}

  /** Hands the histogram to `registry`, which formats it at each scrape. */
  register(registry: Registry): void {
    registry.registerMetric(this as never);
  }

  /** `id` names the label set (any string that tells them apart); `labels` is made only the first time. */
  observe(id: string, labels: () => Record<L, string>, value: number): void {
    if (!Number.isFinite(value)) return;
    let series = this.#series.get(id);
    if (!series) {
      series = { labels: labels(), counts: new Array(this.buckets.length + 1).fill(0), sum: 0, count: 0 };
      this.#series.set(id, series);
    }
    let bucket = 0;
    while (bucket < this.buckets.length && value > this.buckets[bucket]) bucket++;
    series.counts[bucket]++;
    series.sum += value;
    series.count++;
  }

  /** What the registry formats: the shape prom-client's own histograms give it. */
  get() {
    const values = [];
    for (const { labels, counts, sum, count } of this.#series.values()) {
      let cumulative = 0;
      for (let i = 0; i < counts.length; i++) {
        cumulative += counts[i];
        const le = i < this.buckets.length ? this.buckets[i] : "+Inf";
        values.push({ labels: { le, ...labels }, value: cumulative, metricName: `${this.name}_bucket` });
      }
      values.push({ labels, value: sum, metricName: `${this.name}_sum` });
      values.push({ labels, value: count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  reset(): void {
    this.#series.clear();
  }
}
