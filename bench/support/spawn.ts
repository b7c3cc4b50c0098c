/**
 * The bench's child processes: started with `deno run`, ready once they print `listening on http://…`, and
 * stopped by PID. Their output is always drained (a full pipe would stall the child) and the tail is kept, so
 * a child that fails explains itself.
 */

import { stopProcess } from "../../scripts/stop_process.ts";

const root = new URL("../..", import.meta.url).pathname;
const LISTENING = /[Ll]istening on (http:\/\/[^\s/]+)/;
const TAIL_CHARS = 4_000;
const READY_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 10_000;

export interface Child {
  name: string;
  pid: number;
  /** Base URL it listens on, 127.0.0.1 form. */
  url: string;
  /** The last few thousand characters it wrote, stdout and stderr together. */
  tail(): string;
  /** SIGTERM (or `signal`), then SIGKILL if it has not exited after a grace period; safe to call twice. */
  stop(signal?: Deno.Signal): Promise<Deno.CommandStatus>;
}

export interface SpawnOptions {
  name: string;
  /** Arguments after the deno binary, e.g. `["run", "--allow-net", "bench/fast_backend.ts"]`. */
  args: string[];
  env?: Record<string, string>;
}

/** Deno itself, run from the repository root, without colours, its output captured. */
function denoCommand(args: string[], env: Record<string, string>): Deno.Command {
  return new Deno.Command(Deno.execPath(), {
    args,
    cwd: root,
    env: { NO_COLOR: "1", ...env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  });
}

export async function spawnDeno({ name, args, env = {} }: SpawnOptions): Promise<Child> {
  const child = denoCommand(args, env).spawn();
  let seen = "";
  const { promise: ready, resolve, reject } = Promise.withResolvers<string>();
  const drain = async (stream: ReadableStream<Uint8Array<ArrayBuffer>>) => {
    for await (const text of stream.pipeThrough(new TextDecoderStream())) {
      seen = (seen + text).slice(-TAIL_CHARS);
      const match = LISTENING.exec(seen);
      if (match) resolve(match[1].replace("0.0.0.0", "127.0.0.1"));
    }
  };
  const drained = Promise.all([drain(child.stdout), drain(child.stderr)]).catch(() => {});
  child.status.then((s) => reject(new Error(`${name} exited (${s.code}) before listening:\n${seen}`)));
  const timer = setTimeout(
    () => reject(new Error(`${name} did not listen within 60 s:\n${seen}`)),
    READY_TIMEOUT_MS,
  );

  let stopped: Promise<Deno.CommandStatus> | undefined;
  const stop = (signal: Deno.Signal = "SIGTERM") =>
    stopped ??= (async () => {
      const status = await stopProcess(child, STOP_GRACE_MS, signal);
      await drained;
      return status;
    })();

  try {
    const url = await ready;
    return { name, pid: child.pid, url, tail: () => seen, stop };
  } catch (error) {
    await stop("SIGKILL");
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

/** Runs deno to completion; returns stdout, throwing with stderr when it fails. */
export async function runDeno(args: string[], env: Record<string, string> = {}): Promise<string> {
  const out = await denoCommand(args, env).output();
  const decode = (b: Uint8Array) => new TextDecoder().decode(b);
  if (!out.success) throw new Error(`deno ${args.join(" ")} failed:\n${decode(out.stderr)}`);
  return decode(out.stdout);
}

/** Peak and current resident memory of a process, in MB (Linux only; undefined elsewhere). */
export async function memoryOf(pid: number): Promise<{ peakMb: number; currentMb: number } | undefined> {
  let status: string;
  try {
    status = await Deno.readTextFile(`/proc/${pid}/status`);
  } catch {
    return undefined;
  }
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN);
  return { peakMb: kb("VmHWM") / 1024, currentMb: kb("VmRSS") / 1024 };
}

let ticksPerSecond: number | undefined;

/**
 * CPU time (user + system) a process has used so far, in µs; undefined where /proc is not available. With
 * `mainThread`, only its main thread's: the one that runs its JavaScript and its HTTP engine.
 */
export async function cpuTimeUs(pid: number, mainThread = false): Promise<number | undefined> {
  try {
    // The command name (field 2) may hold spaces, so fields are counted from the parenthesis that closes it.
    const stat = await Deno.readTextFile(mainThread ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`);
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    ticksPerSecond ??= Number(
      new TextDecoder().decode((await new Deno.Command("getconf", { args: ["CLK_TCK"] }).output()).stdout),
    ) || 100;
    return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond * 1e6;
  } catch {
    return undefined;
  }
}
