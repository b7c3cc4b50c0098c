/**
 * @module What the health prober's tests share: server records to probe, a prober over a fixed list with
 * a clock the test moves, and a bounded wait for a probe's outcome.
 */
import assert from "node:assert/strict";
import type { ServerRecord } from "../../lib/store/records.ts";
import { HealthProber } from "../../lib/routing/health.ts";
import { ServerState, type ServerStatus } from "../../lib/routing/server_state.ts";

export function record(name: string, url: string, extra: Partial<ServerRecord> = {}): ServerRecord {
  const at = "2026-01-01T00:00:00.000Z";
  return {
    name,
    url,
    kind: "ollama",
    models: [{ tag: "m1" }],
    weight: 1,
    enabled: true,
    createdAt: at,
    updatedAt: at,
    ...extra,
  };
}

export function setup(servers: ServerRecord[], options: { timeoutMs?: number; fetch?: typeof fetch } = {}) {
  const clock = { t: 1_700_000_000_000 };
  const state = new ServerState({ now: () => clock.t });
  const prober = new HealthProber({
    fetch: options.fetch ?? fetch,
    servers: () => servers,
    state,
    timeoutMs: options.timeoutMs ?? 2_000,
  });
  const one = (name: string): ServerStatus => {
    const found = state.status().find((s) => s.name === name);
    assert.ok(found, `no status for ${name}`);
    return found;
  };
  return { clock, state, prober, one };
}
