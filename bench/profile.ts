/**
 * Where the gateway's time goes per request: the gateway runs under `--cpu-prof` (V8's sampling profiler)
 * while wrk puts 64 connections (`PROFILE_CONNECTIONS`) of format-A chats (format B with `PROFILE_FORMAT=b`)
 * on it (whole answers, or streamed ones with `stream`), then stops on SIGTERM as in production, which writes
 * the profile. `chunks` streams long answers one after the other instead and counts per chunk; `bare` profiles
 * the bare proxy under the same load, as the reference. Prints the top self-time functions and self time
 * grouped by source (our modules, each npm package, Deno's runtime, the garbage collector), as shares of the
 * busy (non-idle) time.
 * Usage: `deno run -A bench/profile.ts [seconds] [gateway|stream|chunks|bare]`; the profile stays in bench/results/.
 */
import { spawnDeno } from "./support/spawn.ts";
import { startBenchGateway } from "./support/gateway_setup.ts";
import { chooseLoadTool, runLoad } from "./support/load.ts";
import { benchTargets, type Target } from "./support/targets.ts";
import { chunksPerSecond } from "./support/streaming.ts";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const seconds = Number(Deno.args[0] ?? 10);
const MODES = ["gateway", "stream", "chunks", "bare"] as const;
const mode = (Deno.args[1] ?? "gateway") as typeof MODES[number];
const connections = Number(Deno.env.get("PROFILE_CONNECTIONS") ?? 64);
const gatewayTarget = Deno.env.get("PROFILE_FORMAT") === "b" ? "gatewayB" : "gateway";
if (!MODES.includes(mode)) throw new Error(`mode: one of ${MODES.join(", ")}`);
const LONG_STREAM_CHUNKS = 20_000;
const outDir = new URL("./results/profile/", import.meta.url).pathname;
const root = new URL("..", import.meta.url).href;

function source(url: string): string {
  if (!url) return "(native / runtime)";
  const npm = /\/npm\/[^/]+\/((?:@[^/]+\/)?[^/]+)\//.exec(url) ??
    /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (npm) return `npm:${npm[1]}`;
  if (url.startsWith(root)) return url.slice(root.length);
  if (url.startsWith("ext:") || url.startsWith("node:")) return url.split("/").slice(0, 2).join("/");
  return url;
}

/** Self time per node, in µs, from the sample stream (hit counts ignore the varying sample intervals). */
function selfTimes(profile: CpuProfile): Map<number, number> {
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  return self;
}

function label({ functionName, url, lineNumber }: ProfileNode["callFrame"]): string {
  return `${functionName || "(anonymous)"} ${url ? `${source(url)}:${lineNumber + 1}` : ""}`.trim();
}

const isOwn = (url: string) => url.startsWith(root) && !url.includes("/node_modules/");

/**
 * Where the time of each sample belongs in the project's code: `inclusive` counts a sample once for every
 * distinct function of ours on its stack; `nearest` gives it to the deepest one, so runtime and library work
 * is charged to the line of ours that asked for it. Stacks end at an await, so both see synchronous parts only.
 */
function ownTimes(profile: CpuProfile, byId: Map<number, ProfileNode>) {
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const inclusive = new Map<string, number>();
  const nearest = new Map<string, number>();
  const add = (m: Map<string, number>, k: string, us: number) => m.set(k, (m.get(k) ?? 0) + us);
  profile.samples.forEach((id, i) => {
    const us = profile.timeDeltas[i] ?? 0;
    if (byId.get(id)!.callFrame.functionName === "(idle)") return;
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)!.callFrame;
      if (isOwn(frame.url)) seen.add(label(frame));
    }
    for (const fn of seen) add(inclusive, fn, us);
    add(nearest, seen.values().next().value ?? "(no frame of ours: runtime, GC)", us);
  });
  return { inclusive, nearest };
}

/** `units`: what the time is divided by (requests, or streamed chunks in `chunks` mode). */
function report(profile: CpuProfile, units: number, unit: string): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = selfTimes(profile);
  const byFunction = new Map<string, number>();
  const bySource = new Map<string, number>();
  let busy = 0;
  for (const [id, us] of self) {
    const frame = byId.get(id)!.callFrame;
    if (frame.functionName === "(idle)") continue;
    busy += us;
    const fn = label(frame);
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + us);
    const group = frame.functionName.startsWith("(") ? frame.functionName : source(frame.url);
    bySource.set(group, (bySource.get(group) ?? 0) + us);
  }
  const own = ownTimes(profile, byId);
  const top = (m: Map<string, number>, n: number) =>
    [...m].sort((a, b) => b[1] - a[1]).slice(0, n)
      .map(([name, us]) =>
        `${(us / busy * 100).toFixed(1).padStart(5)}%  ${
          (us / units).toFixed(1).padStart(6)
        } µs/${unit}  ${name}`
      );
  return [
    `busy (non-idle) time ${(busy / 1e6).toFixed(2)} s over ${units} ${unit}s: ${
      (busy / units).toFixed(1)
    } µs/${unit}`,
    "",
    "Top self time, by function:",
    ...top(byFunction, 40),
    "",
    "Self time by source:",
    ...top(bySource, 30),
    "",
    "Inclusive time of the project's own functions (synchronous parts):",
    ...top(own.inclusive, 30),
    "",
    "Time charged to the deepest function of ours on the stack (its callees in libraries and the runtime):",
    ...top(own.nearest, 30),
  ].join("\n");
}

/** The process to profile, started with the profiler's flags, and the load to put on it. */
async function startSubject(
  backendUrl: string,
  flags: string[],
): Promise<{ target: Target; stop(): Promise<unknown> }> {
  if (mode === "bare") {
    const bare = await spawnDeno({
      name: "bare proxy",
      args: ["run", "--allow-net", ...flags, "bench/bare_proxy.ts", backendUrl],
    });
    return {
      target: benchTargets({ backend: backendUrl, bare: bare.url, gateway: "" }, "").bare,
      stop: bare.stop,
    };
  }
  const gateway = await startBenchGateway(backendUrl, flags);
  const target = benchTargets(
    { backend: backendUrl, bare: "", gateway: gateway.child.url },
    gateway.secret,
  )[gatewayTarget];
  return { target, stop: gateway.close };
}

const tool = await chooseLoadTool(console.error);
const backend = await spawnDeno({ name: "backend", args: ["run", "--allow-net", "bench/fast_backend.ts"] });
try {
  await Deno.mkdir(outDir, { recursive: true });
  const before = new Set([...Deno.readDirSync(outDir)].map((e) => e.name));
  const subject = await startSubject(backend.url, ["--cpu-prof", `--cpu-prof-dir=${outDir}`]);
  let units = 0;
  try {
    if (mode === "chunks") {
      const until = performance.now() + seconds * 1000;
      while (performance.now() < until) {
        const rate = await chunksPerSecond(subject.target.streamed, LONG_STREAM_CHUNKS);
        units += LONG_STREAM_CHUNKS;
        console.log(`${mode}: ${Math.round(rate)} chunks/s`);
      }
    } else {
      const { whole, streamed } = subject.target;
      const load = mode === "stream" ? { ...whole, body: streamed.body(8) } : whole;
      const result = await runLoad(tool, { ...load, connections, seconds });
      units = result.requests;
      const rps = Math.round(result.requestsPerSec);
      console.log(`${mode}: ${rps} req/s, p50 ${Math.round(result.p50Us)} µs, ${result.errors} errors`);
    }
  } finally {
    await subject.stop();
  }
  const written = [...Deno.readDirSync(outDir)].map((e) => e.name).filter((n) => !before.has(n));
  if (!written.length) throw new Error(`the ${mode} process wrote no profile`);
  const file = `${outDir}${written[0]}`;
  console.log(`profile: ${file}\n`);
  console.log(report(JSON.parse(await Deno.readTextFile(file)), units, mode === "chunks" ? "chunk" : "req"));
} finally {
  await backend.stop();
}
