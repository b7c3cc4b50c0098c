/**
 * @module Human-readable output: aligned tables for lists, `label: value` lines for one record. JSON output
 * needs no help; it is the records themselves, minus secrets.
 */

export function cell(value: unknown): string {
  if (value === undefined || value === null || value === "") return "-";
  if (Array.isArray(value)) return value.length ? value.map(cell).join(", ") : "-";
  if (typeof value === "boolean") return value ? "yes" : "no";
  return String(value);
}

export function table(headers: string[], rows: unknown[][], empty: string): string {
  if (!rows.length) return empty;
  const cells = [headers, ...rows.map((row) => row.map(cell))];
  const widths = headers.map((_, i) => Math.max(...cells.map((row) => row[i].length)));
  return cells
    .map((row) => row.map((text, i) => (i === row.length - 1 ? text : text.padEnd(widths[i]))).join("  "))
    .join("\n");
}

export function fields(entries: [string, unknown][]): string {
  const width = Math.max(...entries.map(([label]) => label.length)) + 1;
  return entries.map(([label, value]) => `${(label + ":").padEnd(width)} ${cell(value)}`).join("\n");
}
