/**
 * @module Reading one value from a gateway's /metrics, at once or once it reaches a mark.
 */
import assert from "node:assert/strict";
import { eventually } from "./wait_for.ts";

export async function metric(metricsUrl: string, name: string): Promise<number> {
  const text = await (await fetch(metricsUrl)).text();
  const line = text.split("\n").find((l) => l.startsWith(`${name} `));
  assert.ok(line, `${name} is not in /metrics`);
  return Number(line.split(" ")[1]);
}

export async function waitForMetric(metricsUrl: string, name: string, check: (value: number) => boolean) {
  await eventually(`${name} to reach its mark`, async () => check(await metric(metricsUrl, name)));
  return await metric(metricsUrl, name);
}
