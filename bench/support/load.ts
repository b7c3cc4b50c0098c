/**
 * Load generation in a process of its own: wrk (Debian's package, installed when missing and we are root), or
 * autocannon from npm when wrk cannot be had. wrk needs a Lua script for a POST body and headers; its `done`
 * hook prints the figures as one JSON line, with latency percentiles in microseconds.
 */

export interface LoadSpec {
  url: string;
  body: string;
  headers: Record<string, string>;
  connections: number;
  seconds: number;
}

export interface LoadResult {
  requestsPerSec: number;
  p50Us: number;
  p99Us: number;
  /** Socket errors and timeouts plus answers that were not 2xx/3xx. */
  errors: number;
  requests: number;
}

export type LoadTool = "wrk" | "autocannon";

const AUTOCANNON = "autocannon@9.0.0";

async function run(cmd: string, args: string[]) {
  const out = await new Deno.Command(cmd, { args, stdin: "null", stdout: "piped", stderr: "piped" }).output();
  const decode = (b: Uint8Array) => new TextDecoder().decode(b);
  return { ok: out.success, stdout: decode(out.stdout), stderr: decode(out.stderr) };
}

async function succeeds(cmd: string, args: string[]): Promise<boolean> {
  try {
    return (await run(cmd, args)).ok;
  } catch {
    return false;
  }
}

/** wrk if present or installable, else autocannon through npx; throws when neither can be run. */
export async function chooseLoadTool(log: (line: string) => void): Promise<LoadTool> {
  if (await succeeds("which", ["wrk"])) return "wrk";
  const root = (await run("id", ["-u"]).catch(() => ({ stdout: "" }))).stdout.trim() === "0";
  if (root) {
    log("wrk is missing: apt-get install -y wrk");
    if (!await succeeds("apt-get", ["install", "-y", "wrk"])) {
      await succeeds("apt-get", ["update"]);
      await succeeds("apt-get", ["install", "-y", "wrk"]);
    }
    if (await succeeds("which", ["wrk"])) return "wrk";
  }
  log(`wrk cannot be had: falling back to npx --yes ${AUTOCANNON}`);
  if (await succeeds("npx", ["--yes", AUTOCANNON, "--version"])) return "autocannon";
  throw new Error("no load generator: install wrk (apt-get install wrk) or make npx available");
}

/** A Lua long string cannot be closed by a body that lacks its closing bracket. */
function luaString(text: string): string {
  let level = "=";
  while (text.includes(`]${level}]`)) level += "=";
  return `[${level}[${text}]${level}]`;
}

function wrkScript(spec: LoadSpec): string {
  const headers = Object.entries(spec.headers)
    .map(([name, value]) => `wrk.headers[ ${luaString(name)} ] = ${luaString(value)}`);
  return [
    'wrk.method = "POST"',
    `wrk.body = ${luaString(spec.body)}`,
    ...headers,
    "done = function(summary, latency, requests)",
    "  local e = summary.errors",
    '  io.write(string.format("WRKJSON {\\"requests\\":%d,\\"durationUs\\":%d,\\"p50\\":%f,\\"p99\\":%f,' +
    '\\"errors\\":%d}\\n", summary.requests, summary.duration, latency:percentile(50), ' +
    "latency:percentile(99), e.connect + e.read + e.write + e.timeout + e.status))",
    "end",
    "",
  ].join("\n");
}

async function runWrk(spec: LoadSpec): Promise<LoadResult> {
  const script = await Deno.makeTempFile({ prefix: "bench-wrk-", suffix: ".lua" });
  try {
    await Deno.writeTextFile(script, wrkScript(spec));
    const out = await run("wrk", [
      ...["-t", "1", "-c", String(spec.connections), "-d", `${spec.seconds}s`],
      ...["--timeout", "10s", "-s", script, spec.url],
    ]);
    const line = /^WRKJSON (.*)$/m.exec(out.stdout);
    if (!out.ok || !line) throw new Error(`wrk failed:\n${out.stdout}\n${out.stderr}`);
    const r = JSON.parse(line[1]);
    return {
      requestsPerSec: r.requests / (r.durationUs / 1e6),
      p50Us: r.p50,
      p99Us: r.p99,
      errors: r.errors,
      requests: r.requests,
    };
  } finally {
    await Deno.remove(script).catch(() => {});
  }
}

async function runAutocannon(spec: LoadSpec): Promise<LoadResult> {
  const headers = Object.entries(spec.headers).flatMap(([n, v]) => ["-H", `${n}=${v}`]);
  const out = await run("npx", [
    ...["--yes", AUTOCANNON, "-j", "-c", String(spec.connections), "-d", String(spec.seconds)],
    ...["-m", "POST", ...headers, "-b", spec.body, spec.url],
  ]);
  if (!out.ok) throw new Error(`autocannon failed:\n${out.stderr}`);
  const r = JSON.parse(out.stdout);
  // autocannon reports latency in milliseconds.
  return {
    requestsPerSec: r.requests.total / r.duration,
    p50Us: r.latency.p50 * 1000,
    p99Us: r.latency.p99 * 1000,
    errors: r.errors + r.timeouts + r.non2xx,
    requests: r.requests.total,
  };
}

export function runLoad(tool: LoadTool, spec: LoadSpec): Promise<LoadResult> {
  return tool === "wrk" ? runWrk(spec) : runAutocannon(spec);
}
