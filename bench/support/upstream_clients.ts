/**
 * Reference rows: the bare proxy with each upstream client the runtime offers, loaded like the bare `fetch`
 * proxy at full concurrency, in the same rounds (order rotating), so the cheapest way to call a backend is
 * measured rather than guessed.
 */
import { type Child, cpuTimeUs, spawnDeno } from "./spawn.ts";
import type { LoadResult, LoadSpec, LoadTool } from "./load.ts";
import { runLoad } from "./load.ts";
import { median } from "./streaming.ts";

export const UPSTREAM_CLIENTS = [
  "fetch",
  "fetch-client",
  "node-http",
  "undici",
  "undici-dispatch",
  "gateway-client",
] as const;
export type UpstreamClient = typeof UPSTREAM_CLIENTS[number];

export type UpstreamFigures = Record<
  UpstreamClient,
  { requestsPerSec: number; cpuUsPerRequest: number; toFetch: number }
>;

/** The bare proxy rebuilt on `client` (`bench/client_proxy.ts`), with V8 flags if given. */
export function spawnClientProxy(
  client: UpstreamClient,
  backendUrl: string,
  v8Flags: string[] = [],
): Promise<Child> {
  return spawnDeno({
    name: `${client} proxy`,
    args: [
      "run",
      ...v8Flags,
      "--allow-net",
      "--allow-env",
      "--allow-read",
      "bench/client_proxy.ts",
      client,
      backendUrl,
    ],
  });
}

export async function upstreamClientFigures(options: {
  tool: LoadTool;
  backendUrl: string;
  /** The bare `fetch` proxy already running, and the load it is given. */
  bare: { url: string; pid: number };
  spec: (baseUrl: string) => Omit<LoadSpec, "connections" | "seconds">;
  rounds: number;
  seconds: number;
  connections: number;
  check: (name: string, r: LoadResult) => LoadResult;
  log: (line: string) => void;
}): Promise<UpstreamFigures> {
  const spawned: Child[] = [];
  const proxies = { fetch: options.bare } as Record<UpstreamClient, { url: string; pid: number }>;
  try {
    for (const client of UPSTREAM_CLIENTS.slice(1)) {
      const child = await spawnClientProxy(client, options.backendUrl);
      spawned.push(child);
      proxies[client] = child;
    }
    const runs = Object.fromEntries(UPSTREAM_CLIENTS.map((c) => [c, [] as { rps: number; cpu: number }[]]));
    for (let round = 0; round < options.rounds; round++) {
      options.log(`round ${round + 1}/${options.rounds}: upstream clients`);
      for (let i = 0; i < UPSTREAM_CLIENTS.length; i++) {
        const client = UPSTREAM_CLIENTS[(i + round) % UPSTREAM_CLIENTS.length];
        const { url, pid } = proxies[client];
        const before = await cpuTimeUs(pid) ?? NaN;
        const spec = { ...options.spec(url), connections: options.connections, seconds: options.seconds };
        const r = options.check(`${client} proxy`, await runLoad(options.tool, spec));
        runs[client].push({
          rps: r.requestsPerSec,
          cpu: ((await cpuTimeUs(pid) ?? NaN) - before) / r.requests,
        });
      }
    }
    return Object.fromEntries(UPSTREAM_CLIENTS.map((c) => [c, {
      requestsPerSec: median(runs[c].map((r) => r.rps)),
      cpuUsPerRequest: median(runs[c].map((r) => r.cpu)),
      // Within each round, against the fetch proxy's run of that round.
      toFetch: median(runs[c].map((r, i) => r.rps / runs.fetch[i].rps)),
    }])) as UpstreamFigures;
  } finally {
    for (const child of spawned) await child.stop();
  }
}
