/**
 * @module The gateway's metrics as figures for the console's metrics page: read from the registry as
 * prom-client's JSON (the same values the Prometheus text shows), a histogram's bucket, sum and count lines
 * gathered per label set, then summed over labels or estimated from the buckets.
 */
import type { MetricObjectWithValues, MetricValue } from "prom-client";

export interface Sample {
  labels?: Record<string, string>;
  value?: number;
  /** Cumulative counts by upper bound (`+Inf` as Infinity), for a histogram. */
  buckets?: Map<number, number>;
  count?: number;
  sum?: number;
}

export interface Family {
  name: string;
  help: string;
  type: string;
  metrics: Sample[];
}

/** A value as `getMetricsAsJSON` gives it: histogram lines also name their series (`_bucket`, `_sum`). */
type Value = MetricValue<string> & { metricName?: string };
type Json = Omit<MetricObjectWithValues<MetricValue<string>>, "values"> & { values: Value[] };

function stringLabels(labels: Partial<Record<string, string | number>>): Record<string, string> {
  return Object.fromEntries(Object.entries(labels).map(([k, v]) => [k, String(v)]));
}

/** A histogram's lines, one sample per label set (without `le`). */
function histogramSamples(family: Json): Sample[] {
  const byLabels = new Map<string, Sample>();
  for (const v of family.values) {
    const { le, ...rest } = v.labels;
    const labels = stringLabels(rest);
    const id = JSON.stringify(Object.entries(labels).sort());
    let sample = byLabels.get(id);
    if (!sample) byLabels.set(id, sample = { labels, buckets: new Map(), count: 0, sum: 0 });
    const metric = v.metricName ?? "";
    if (metric.endsWith("_bucket")) {
      sample.buckets!.set(le === "+Inf" ? Infinity : Number(le), v.value);
    } else if (metric.endsWith("_sum")) sample.sum = v.value;
    else if (metric.endsWith("_count")) sample.count = v.value;
  }
  return [...byLabels.values()];
}

export class Families {
  readonly list: Family[];
  readonly #byName: Map<string, Family>;

  constructor(json: Json[]) {
    this.list = json.map((f) => ({
      name: f.name,
      help: f.help,
      type: String(f.type),
      metrics: String(f.type) === "histogram"
        ? histogramSamples(f)
        : f.values.map((v) => ({ labels: stringLabels(v.labels), value: v.value })),
    }));
    this.#byName = new Map(this.list.map((f) => [f.name, f]));
  }

  get(name: string): Family | undefined {
    return this.#byName.get(name);
  }

  /** The samples of `name` whose labels include `match`. */
  samples(name: string, match: Record<string, string> = {}): Sample[] {
    return (this.get(name)?.metrics ?? []).filter((m) =>
      Object.entries(match).every(([k, v]) => m.labels?.[k] === v)
    );
  }

  /** The sum of the matching samples' values (counters, gauges). */
  total(name: string, match: Record<string, string> = {}): number {
    return this.samples(name, match).reduce((n, m) => n + Number(m.value ?? 0), 0);
  }

  /** Sums of `name` per value of `label`, largest first. */
  by(name: string, label: string): [string, number][] {
    const sums = new Map<string, number>();
    for (const m of this.samples(name)) {
      const key = m.labels?.[label] ?? "";
      sums.set(key, (sums.get(key) ?? 0) + Number(m.value ?? 0));
    }
    return [...sums].sort((a, b) => b[1] - a[1]);
  }

  /**
   * A histogram over all its label sets: how many observations, their mean, and the bucket bound the
   * median and the 95th percentile fall under (a bucket bound, so "at most").
   */
  histogram(name: string): { count: number; mean?: number; p50?: number; p95?: number } {
    const merged = new Map<number, number>();
    let count = 0;
    let sum = 0;
    for (const m of this.samples(name)) {
      count += Number(m.count ?? 0);
      sum += Number(m.sum ?? 0);
      for (const [bound, n] of m.buckets ?? []) merged.set(bound, (merged.get(bound) ?? 0) + n);
    }
    if (count === 0) return { count };
    const bounds = [...merged].sort((a, b) => a[0] - b[0]);
    const under = (q: number) => bounds.find(([, n]) => n >= q * count)?.[0];
    return { count, mean: sum / count, p50: under(0.5), p95: under(0.95) };
  }
}

/** `{a="1", b="2"}` as `a=1, b=2`. */
export function labelsText(labels: Record<string, string> | undefined): string {
  const entries = Object.entries(labels ?? {});
  return entries.length === 0 ? "–" : entries.map(([k, v]) => `${k}=${v}`).join(", ");
}
