/**
 * Orders items by a weighted random draw without replacement (Efraimidis–Spirakis: sort by -ln(u)/w), so
 * the first pick is proportional to weight and failover walks the rest in a weighted order too.
 */
export function weightedOrder<T>(
  items: readonly T[],
  weight: (item: T) => number,
  random: () => number,
): T[] {
  if (items.length < 2) return [...items];
  return items
    .map((item) => ({ item, rank: -Math.log(1 - random()) / Math.max(weight(item), Number.MIN_VALUE) }))
    .sort((a, b) => a.rank - b.rank)
    .map((r) => r.item);
}
