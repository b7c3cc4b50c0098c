/**
 * @module Comparing targets on a shared, noisy machine: each round loads every target once, in an order that
 * rotates from round to round, and two targets are compared within a round, where they saw the same machine,
 * before the median over rounds is taken.
 */
import { type LoadResult, type LoadSpec, type LoadTool, runLoad } from "./load.ts";
import { cpuTimeUs } from "./spawn.ts";
import { median } from "./streaming.ts";

/** `f` of each round's pair, then the median. */
export function inRounds<A, B>(a: A[], b: B[], f: (a: A, b: B) => number): number {
  return median(perRound(a, b, f));
}

/** `f` of each round's pair, round by round: how far the rounds agree. */
export function perRound<A, B>(a: A[], b: B[], f: (a: A, b: B) => number): number[] {
  return a.map((x, i) => f(x, b[i]));
}

/** The items in a different order each round. */
export function rotated<T>(items: readonly T[], round: number): T[] {
  return items.map((_, i) => items[(i + round) % items.length]);
}

/**
 * `n` timings of each name, one name after the other, the order rotating with each turn; each name's median.
 * Finer than a round: timings a few milliseconds apart see the same machine, where a block of one target's
 * timings after another's may not (a host's speed changes between them).
 */
export async function interleavedMedians<N extends string>(
  names: readonly N[],
  n: number,
  time: (name: N) => Promise<number>,
  turn = 0,
): Promise<Record<N, number>> {
  const all = Object.fromEntries(names.map((name) => [name, [] as number[]])) as Record<N, number[]>;
  for (let i = 0; i < n; i++) {
    for (const name of rotated(names, turn + i)) all[name].push(await time(name));
  }
  return Object.fromEntries(names.map((name) => [name, median(all[name])])) as Record<N, number>;
}

/** A run with failed requests measures failures, not the gateway: stop rather than report it. */
export function checked(name: string, r: LoadResult): LoadResult {
  if (r.errors > r.requests * 0.001) throw new Error(`${name}: ${r.errors} of ${r.requests} requests failed`);
  return r;
}

export interface LoadTarget {
  spec: Omit<LoadSpec, "connections" | "seconds">;
  /** The process whose CPU time the target's requests are charged with. */
  pid: number;
}

export interface RoundRun extends LoadResult {
  /** CPU time the target's process spent per request. */
  cpuUsPerRequest: number;
  /** Of which its main thread's. */
  mainUsPerRequest: number;
}

/** Each target's share of a round is cut into this many slices, the targets taking turns slice by slice. */
const SLICES = 3;

/**
 * One run from its slices: requests and CPU summed, the rate over their whole time, each latency percentile
 * the slices' median.
 */
export function merged(slices: RoundRun[]): RoundRun {
  const requests = slices.reduce((sum, r) => sum + r.requests, 0);
  const seconds = slices.reduce((sum, r) => sum + r.requests / r.requestsPerSec, 0);
  const spent = (perRequest: (r: RoundRun) => number) =>
    slices.reduce((sum, r) => sum + perRequest(r) * r.requests, 0) / requests;
  return {
    requests,
    requestsPerSec: requests / seconds,
    errors: slices.reduce((sum, r) => sum + r.errors, 0),
    p50Us: median(slices.map((r) => r.p50Us)),
    p99Us: median(slices.map((r) => r.p99Us)),
    cpuUsPerRequest: spent((r) => r.cpuUsPerRequest),
    mainUsPerRequest: spent((r) => r.mainUsPerRequest),
  };
}

/**
 * Every target loaded at 1 connection (unless `single` is false), then every target at `connections`, round
 * after round, the order rotating; a short warm-up at full load first. Each target's runs, round by round.
 * Within a round a target's `seconds` are cut into up to `SLICES` slices (a second each at the default 3 s),
 * the targets taking turns slice by slice: two targets compared within a round then ran within a few seconds
 * of each other, not up to three runs apart, on a host whose speed changes from one run to the next.
 */
export async function loadInRounds<N extends string>(
  targets: Record<N, LoadTarget>,
  options: {
    tool: LoadTool;
    rounds: number;
    seconds: number;
    connections: number;
    log: (line: string) => void;
    what: string;
    single?: boolean;
  },
): Promise<{ single: Record<N, RoundRun[]>; loaded: Record<N, RoundRun[]> }> {
  const names = Object.keys(targets) as N[];
  const empty = () => Object.fromEntries(names.map((n) => [n, [] as RoundRun[]])) as Record<N, RoundRun[]>;
  const single = empty();
  const loaded = empty();
  const atOne = options.single !== false;
  // Whole seconds (what the load tools take), shared so that the slices add up to `seconds`.
  const total = Math.max(1, Math.floor(options.seconds));
  const slices = Math.min(SLICES, total);
  const sliceSeconds = (slice: number) => Math.floor(total / slices) + (slice < total % slices ? 1 : 0);
  const load = async (name: N, connections: number, seconds: number): Promise<RoundRun> => {
    const { spec, pid } = targets[name];
    const before = await cpuTimeUs(pid);
    const mainBefore = await cpuTimeUs(pid, true);
    const r = checked(name, await runLoad(options.tool, { ...spec, connections, seconds }));
    const mainAfter = await cpuTimeUs(pid, true);
    const after = await cpuTimeUs(pid);
    return {
      ...r,
      cpuUsPerRequest: ((after ?? NaN) - (before ?? NaN)) / r.requests,
      mainUsPerRequest: ((mainAfter ?? NaN) - (mainBefore ?? NaN)) / r.requests,
    };
  };
  const inTurns = async (order: N[], connections: number, into: Record<N, RoundRun[]>) => {
    const parts = empty();
    for (let slice = 0; slice < slices; slice++) {
      for (const name of rotated(order, slice)) {
        parts[name].push(await load(name, connections, sliceSeconds(slice)));
      }
    }
    for (const name of order) into[name].push(merged(parts[name]));
  };
  options.log(`${options.what}: warming up`);
  for (const name of names) await load(name, options.connections, 2);
  const levels = atOne ? `1 and ${options.connections}` : `${options.connections}`;
  for (let round = 0; round < options.rounds; round++) {
    options.log(`${options.what}: round ${round + 1}/${options.rounds}, ${levels} connections`);
    const order = rotated(names, round);
    if (atOne) await inTurns(order, 1, single);
    await inTurns(order, options.connections, loaded);
  }
  return { single, loaded };
}

/** Sends each target's request once and checks it is answered with the bench backend's text. */
export async function smokeTest(targets: Record<string, LoadTarget>): Promise<void> {
  for (const [name, { spec }] of Object.entries(targets)) {
    const res = await fetch(spec.url, { method: "POST", headers: spec.headers, body: spec.body });
    const text = await res.text();
    if (res.status !== 200 || !text.includes("Hello from the bench backend")) {
      throw new Error(`${name} answered ${res.status}: ${text.slice(0, 300)}`);
    }
  }
}
