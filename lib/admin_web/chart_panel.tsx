/** @module The overview's chart panel: the chosen scope's series, and the scopes there is data for. */
import type { VNode } from "preact";
import type { Deps } from "../deps.ts";
import { getKey } from "../store/keys.ts";
import { UsageCharts } from "./charts.tsx";
import type { Scope, UsageSeries } from "./usage_series.ts";

/** Enough to pick from; the busiest keys are on the usage table anyway. */
const MAX_SCOPES = 200;

async function scopeLabel(deps: Deps, scope: Scope): Promise<string> {
  if (scope.startsWith("user:")) return `User ${scope.slice(5)}`;
  const id = scope.slice(4);
  try {
    const key = await getKey(deps.view.kv, id);
    return `Key ${key.name ? `${key.name} (${key.hint})` : key.hint}`;
  } catch {
    return `Key ${id}`;
  }
}

export async function usageCharts(series: UsageSeries, asked: string, deps: Deps): Promise<VNode> {
  const known = (await series.scopes()).slice(0, MAX_SCOPES);
  // An unknown scope shows the whole gateway rather than an empty chart that looks like "no traffic".
  const scope = known.includes(asked) ? asked : "all";
  const scopes = await Promise.all(
    known.map(async (value) => ({ value, label: await scopeLabel(deps, value) })),
  );
  return <UsageCharts series={await series.series(scope)} scope={scope} scopes={scopes} />;
}
