/**
 * @module The remote-store rows: gateway processes on the same backend, on a local store file or on a network
 * store, the KV Connect test server (tests/support/kv_connect/) run in the bench's own process and reached
 * only as a `denokv` would be (`GATEWAY_KV=http://…`, `DENO_KV_ACCESS_TOKEN`). One gateway per store and key:
 * a key without limits and a key with an rpm limit (set high, never reached), each alone on its gateway and
 * store. A gateway that served a second key in the last 15 s keeps that key's share of the slots free for it
 * (lib/routing/slot_shares.ts), and with two keys on one gateway its throughput at 64 connections here fell to
 * a tenth, which hides any store round trip. At each injected round trip (0, 5 and 20 ms) all four are loaded
 * in the same rounds, order rotating, and each remote figure is compared with the local one of its round.
 * Targets: a key without limits adds at most 1 ms to the local store's p50 (it makes no round trip before its
 * answer), an rpm-limited key at most one round trip and 1 ms, and at 20 ms a key without limits keeps at
 * least 80 % of the local store's throughput.
 */
import { type KvConnectServer, openKvConnect, startKvConnect } from "../../tests/support/kv_connect/mod.ts";
import type { LoadTool } from "./load.ts";
import { type KeyedGateway, startKeyedGateway } from "./gateway_setup.ts";
import { type Child, spawnDeno } from "./spawn.ts";
import { gatewayTarget } from "./targets.ts";
import { loadInRounds, type LoadTarget, perRound, type RoundRun, smokeTest } from "./rounds.ts";
import { median } from "./streaming.ts";
import { count, ms, type Row, times, us } from "./report.ts";

export const LATENCIES_MS = [0, 5, 20];
const TOKEN = "bench-kv-connect-token";
const HIGH = "1000000000";
const KEYS = { plain: [], rpm: ["--rpm", HIGH] };
type KeyName = keyof typeof KEYS;
type Store = "local" | "remote";
type Pair = `${Store}-${KeyName}`;

const PLAIN_OVER_LOCAL_US = 1_000;
const THROUGHPUT_AT_20_MS = 0.8;
const STORE_SAMPLES = 21;

export interface KeyFigures {
  localP50Us: number;
  remoteP50Us: number;
  /** Each round's remote p50 minus its local one, then the median. */
  overLocalUs: number;
  localRequestsPerSec: number;
  remoteRequestsPerSec: number;
  /** Each round's remote throughput ÷ its local one, then the median. */
  toLocal: number;
  rounds: { overLocalUs: number[]; toLocal: number[] };
}

export interface RemoteStoreFigures {
  rounds: number;
  secondsPerRun: number;
  connections: number;
  latencies: {
    injectedMs: number;
    /** A read's round trip to the store from the bench's own client (median), as the gateway pays it. */
    measuredRoundTripUs: number;
    plain: KeyFigures;
    rpm: KeyFigures;
  }[];
}

/** The median time of a store read through Deno's own KV Connect client. */
async function storeRoundTripUs(kv: Deno.Kv): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < STORE_SAMPLES; i++) {
    const started = performance.now();
    await kv.get(["bench", "round-trip"]);
    times.push((performance.now() - started) * 1000);
  }
  return median(times);
}

function keyFigures(
  single: Record<Pair, RoundRun[]>,
  loaded: Record<Pair, RoundRun[]>,
  key: KeyName,
): KeyFigures {
  const local = `local-${key}` as const;
  const remote = `remote-${key}` as const;
  const mid = (runs: RoundRun[], pick: (r: RoundRun) => number) => median(runs.map(pick));
  const overLocalUs = perRound(single[remote], single[local], (r, l) => r.p50Us - l.p50Us);
  const toLocal = perRound(loaded[remote], loaded[local], (r, l) => r.requestsPerSec / l.requestsPerSec);
  return {
    localP50Us: mid(single[local], (r) => r.p50Us),
    remoteP50Us: mid(single[remote], (r) => r.p50Us),
    overLocalUs: median(overLocalUs),
    localRequestsPerSec: mid(loaded[local], (r) => r.requestsPerSec),
    remoteRequestsPerSec: mid(loaded[remote], (r) => r.requestsPerSec),
    toLocal: median(toLocal),
    rounds: { overLocalUs, toLocal },
  };
}

export async function remoteStoreFigures(options: {
  tool: LoadTool;
  rounds: number;
  seconds: number;
  connections: number;
  log: (line: string) => void;
}): Promise<RemoteStoreFigures> {
  const dir = await Deno.makeTempDir({ prefix: "gateway-bench-remote-" });
  const children: Child[] = [];
  const gateways: KeyedGateway[] = [];
  const stores: KvConnectServer[] = [];
  let client: Deno.Kv | undefined;
  const latencies: RemoteStoreFigures["latencies"] = [];
  try {
    const backend = await spawnDeno({
      name: "backend",
      args: ["run", "--allow-net", "bench/fast_backend.ts"],
    });
    children.push(backend);
    const targets = {} as Record<Pair, LoadTarget>;
    for (const key of Object.keys(KEYS) as KeyName[]) {
      const store = await startKvConnect({ path: `${dir}/remote-${key}.kv`, token: TOKEN });
      stores.push(store);
      const envs: Record<Store, Record<string, string>> = {
        local: { GATEWAY_KV: `${dir}/local-${key}.kv` },
        remote: { GATEWAY_KV: store.url, DENO_KV_ACCESS_TOKEN: TOKEN },
      };
      for (const where of ["local", "remote"] as const) {
        const gateway = await startKeyedGateway(`${where}-store gateway (${key})`, backend.url, envs[where], {
          [key]: KEYS[key],
        });
        gateways.push(gateway);
        targets[`${where}-${key}`] = {
          spec: gatewayTarget(gateway.child.url, gateway.secrets[key]).whole,
          pid: gateway.child.pid,
        };
      }
    }
    client = await openKvConnect(stores[0].url, TOKEN);
    await smokeTest(targets);
    for (const injectedMs of LATENCIES_MS) {
      for (const store of stores) store.setLatency(injectedMs);
      const measuredRoundTripUs = await storeRoundTripUs(client);
      options.log(`remote store at ${injectedMs} ms: a read takes ${ms(measuredRoundTripUs)}`);
      const { single, loaded } = await loadInRounds(targets, {
        ...options,
        what: `remote store ${injectedMs} ms`,
      });
      latencies.push({
        injectedMs,
        measuredRoundTripUs,
        plain: keyFigures(single, loaded, "plain"),
        rpm: keyFigures(single, loaded, "rpm"),
      });
    }
  } finally {
    client?.close();
    for (const g of gateways.reverse()) await g.stop();
    for (const child of children.reverse()) await child.stop();
    for (const store of stores) await store.close();
    await Deno.remove(dir, { recursive: true });
  }
  return {
    rounds: options.rounds,
    secondsPerRun: options.seconds,
    connections: options.connections,
    latencies,
  };
}

const signedUs = (n: number) => `${n >= 0 ? "+" : "−"}${us(Math.abs(n))}`;

export function remoteStoreRows(f: RemoteStoreFigures): Row[] {
  const c = f.connections;
  return f.latencies.flatMap((l): Row[] => {
    const at = `Remote store, ${l.injectedMs} ms injected (a read: ${ms(l.measuredRoundTripUs)})`;
    const p50 = (k: KeyFigures) =>
      `${us(k.remoteP50Us)} vs ${us(k.localP50Us)} local (${signedUs(k.overLocalUs)}; rounds ` +
      `${signedUs(Math.min(...k.rounds.overLocalUs))} to ${signedUs(Math.max(...k.rounds.overLocalUs))})`;
    const rps = (k: KeyFigures) =>
      `${count(k.remoteRequestsPerSec)} vs ${count(k.localRequestsPerSec)} local (${
        times(k.toLocal)
      }; rounds ` +
      `${Math.min(...k.rounds.toLocal).toFixed(2)}–${Math.max(...k.rounds.toLocal).toFixed(2)})`;
    const rpmBound = l.injectedMs * 1000 + PLAIN_OVER_LOCAL_US;
    return [
      {
        figure: `${at}: p50, 1 connection, key without limits`,
        value: p50(l.plain),
        target: `≤ local + ${ms(PLAIN_OVER_LOCAL_US)}`,
        pass: l.plain.overLocalUs <= PLAIN_OVER_LOCAL_US,
      },
      {
        figure: `${at}: p50, 1 connection, rpm-limited key`,
        value: p50(l.rpm),
        target: `≤ local + ${ms(rpmBound)} (one round trip + 1 ms)`,
        pass: l.rpm.overLocalUs <= rpmBound,
      },
      l.injectedMs === 20
        ? {
          figure: `${at}: throughput, ${c} connections, key without limits (req/s)`,
          value: rps(l.plain),
          target: `≥ ${THROUGHPUT_AT_20_MS} × local`,
          pass: l.plain.toLocal >= THROUGHPUT_AT_20_MS,
        }
        : {
          figure: `${at}: throughput, ${c} connections, key without limits (req/s)`,
          value: rps(l.plain),
          target: "reference",
        },
      {
        figure: `${at}: throughput, ${c} connections, rpm-limited key (req/s)`,
        value: rps(l.rpm),
        target: "reference",
      },
    ];
  });
}
