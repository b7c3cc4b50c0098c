/**
 * The fully limited caller the benches measure: user "ana" with day/week/month quotas, and a key of hers with
 * a rate limit and the same quotas, every limit set high enough never to refuse.
 */
import type { Catalog } from "../../lib/store/catalog.ts";
import { basePolicy, type KeyPolicy } from "../../lib/store/records.ts";

const HIGH = 1_000_000_000;

export async function addLimitedUser(catalog: Catalog): Promise<void> {
  await catalog.users.add({ name: "ana", dailyTokens: HIGH, weeklyTokens: HIGH, monthlyTokens: HIGH });
}

export function limitedPolicy(extra: Partial<KeyPolicy> = {}): KeyPolicy {
  return {
    ...basePolicy("m1"),
    user: "ana",
    rpm: HIGH,
    dailyTokens: HIGH,
    weeklyTokens: HIGH,
    monthlyTokens: HIGH,
    ...extra,
  };
}
