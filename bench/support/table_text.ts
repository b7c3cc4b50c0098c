/**
 * @module The routing bench's tables as text: percentiles, milliseconds and ratios as printed, one row of a
 * timed figure against its target, and a Markdown table of rows.
 */

export function percentile(values: number[], p: number): number {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  return sorted.length ? sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)] : NaN;
}

export const ms = (v: number) => `${Math.round(v).toLocaleString("en-US")} ms`;
export const ratio = (a: number, b: number) => `${(a / b).toFixed(2)} ×`;

export type Row = string[];

export function render(head: string[], rows: Row[]): string {
  const all = [head, ...rows];
  const width = head.map((_, i) => Math.max(...all.map((r) => r[i].length)));
  const line = (r: string[]) => `| ${r.map((c, i) => c.padEnd(width[i])).join(" | ")} |`;
  return [line(head), `| ${width.map((n) => "-".repeat(n)).join(" | ")} |`, ...rows.map(line)].join("\n");
}

/** A figure in ms for both policies, with the scheduled one's ratio and, when it has one, its target. */
export function timeRow(label: string, w: number, s: number, atMost?: number): Row {
  const target = atMost === undefined ? "" : `≤ ${atMost} ×`;
  const result = atMost === undefined ? "" : s <= atMost * w ? "pass" : "miss";
  return [label, ms(w), ms(s), ratio(s, w), target, result];
}

/** Worst share of the requests any server served, against an equal share, as a fraction off. */
export function worstShareOff(served: number[]): number {
  const total = served.reduce((a, b) => a + b, 0);
  return Math.max(...served.map((n) => Math.abs(n / total - 1 / served.length) * served.length));
}
