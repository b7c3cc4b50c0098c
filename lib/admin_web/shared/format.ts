/** @module How the admin page writes numbers and instants; shared by the server render and the islands. */

export function ms(value: number | undefined): string {
  if (value === undefined) return "–";
  return value < 10
    ? `${value.toFixed(1)} ms`
    : value < 10_000
    ? `${Math.round(value)} ms`
    : `${(value / 1000).toFixed(1)} s`;
}

export function count(value: number): string {
  return value.toLocaleString("en-US");
}

/** "12 s ago", relative to the view's own clock so server and browser render the same text. */
export function ago(at: number | undefined, now: number): string {
  if (at === undefined) return "never";
  const s = Math.max(0, Math.round((now - at) / 1000));
  return s < 60 ? `${s} s ago` : s < 3600 ? `${Math.floor(s / 60)} min ago` : `${Math.floor(s / 3600)} h ago`;
}

/** "2026-11-22 14:03:09" in UTC, which is also how the quota periods are cut. */
export function utc(iso: string): string {
  return iso.slice(0, 19).replace("T", " ");
}
