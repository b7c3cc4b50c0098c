/**
 * @module Stopping when the command that started the gateway goes away. `npx deno@… task start` runs the
 * gateway four processes down: `npm exec` → `sh -c deno task start` → `deno task` → the gateway. A process
 * manager that stops the service signals the PID it started, `npm exec`; it and the shell die, and `deno
 * task` and the gateway are re-parented and would keep serving on the port. So the gateway watches the
 * launchers above it and stops as on SIGTERM (drained, every record written) when one is gone:
 *
 *  - every ancestor that is `deno task`, a shell running deno, `npm exec` or `npx`, up to the first that is
 *    none of these (a shell, a process manager, a test runner), which is not watched: `nohup npx deno@… task
 *    start &`, or `nohup deno run main.ts &`, must outlive the shell that started it. Which they are, `ps`
 *    tells, where the gateway may run it (`deno task start` allows it, `--allow-run=ps`): Deno lets a program
 *    read `/proc` only with every permission. A launcher is known by its PID and its start time, so a reused
 *    PID does not pass for it;
 *  - the parent among them through `Deno.ppid`, which changes when the parent dies and needs no permission;
 *    without `ps`, the parent is taken for a launcher when `deno task` or npm ran the gateway (`INIT_CWD`).
 *
 * Process managers can also run the gateway under a command whose PID is its own (README, "Under a process
 * manager"); then there is no launcher, and nothing beyond the parent is watched.
 */

/** A process as `ps` shows it. */
export interface ProcessInfo {
  pid: number;
  ppid: number;
  /** When it started, as `ps` tells (to the second): with the PID, names one process for good. */
  started: string;
  /** Its command line, as one string (npm rewrites its own: `npm exec deno@2.9.6 task start`). */
  args: string;
  /** Ended, not yet reaped. */
  zombie: boolean;
}

/** The processes `pids` (every process when omitted) by PID; undefined when they cannot be asked about. */
export type ListProcesses = (pids?: number[]) => Promise<Map<number, ProcessInfo> | undefined>;

const PARENT_CHECK_MS = 1_000;
/** `ps` is a process of its own: asked less often than the parent, which costs nothing. */
const LAUNCHER_CHECK_MS = 2_000;

const LINE = /^\s*(\d+)\s+(\d+)\s+(\S+)\s+(\w{3} \w{3} +\d+ [\d:]+ \d{4})\s?(.*)$/;

/** `ps` output (`pid= ppid= stat= lstart= args=`) as processes by PID. */
export function parsePs(text: string): Map<number, ProcessInfo> {
  const out = new Map<number, ProcessInfo>();
  for (const line of text.split("\n")) {
    const m = LINE.exec(line);
    if (!m) continue;
    const pid = Number(m[1]);
    out.set(pid, { pid, ppid: Number(m[2]), zombie: m[3].startsWith("Z"), started: m[4], args: m[5].trim() });
  }
  return out;
}

/** Asks `ps`, when this process may run it; undefined otherwise. */
export const listProcesses: ListProcesses = async (pids) => {
  if (Deno.build.os === "windows") return undefined;
  // Asked first, so that a runtime without run access does not prompt for it.
  if (Deno.permissions.querySync({ name: "run", command: "ps" }).state !== "granted") return undefined;
  const select = pids ? ["-p", pids.join(",")] : ["-A"];
  try {
    const out = await new Deno.Command("ps", {
      args: [...select, "-o", "pid=,ppid=,stat=,lstart=,args="],
      env: { LC_ALL: "C" },
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).output();
    // `ps -p` exits 1 when none of them is left: its (empty) answer says so.
    return parsePs(new TextDecoder().decode(out.stdout));
  } catch {
    return undefined;
  }
};

/** Whether a process only runs the gateway's command for someone else: its end means the command's end. */
export function isLauncher(args: string): boolean {
  const words = args.trim().split(/\s+/);
  const name = words[0]?.slice(words[0].lastIndexOf("/") + 1);
  if (name === "npx" || (name === "npm" && words[1] === "exec")) return true;
  if (name === "node") return words.some((w) => /(^|\/)(npx|npm)(-cli\.js)?$/.test(w));
  if (name === "deno") return words[1] === "task";
  if (["sh", "bash", "dash"].includes(name) && words[1] === "-c") {
    return /(^|[\s'"/])deno['"]?(\s|$)/.test(words.slice(2).join(" "));
  }
  return false;
}

/** The launchers above `pid`, nearest first: its ancestors while they are launchers. */
export function launchersOf(pid: number, table: Map<number, ProcessInfo>): ProcessInfo[] {
  const out: ProcessInfo[] = [];
  let current = table.get(pid);
  while (current && current.ppid > 1 && out.length < 16) {
    const parent = table.get(current.ppid);
    if (!parent || !isLauncher(parent.args)) break;
    out.push(parent);
    current = parent;
  }
  return out;
}

function ranByTask(): boolean {
  try {
    return Deno.env.get("INIT_CWD") !== undefined;
  } catch {
    return false;
  }
}

export interface LauncherWatch {
  /** The launchers watched beyond the parent; empty: none, or `ps` may not be run. */
  launchers: readonly ProcessInfo[];
  /** Whether the parent is watched (it is a launcher). */
  parent: boolean;
  stop(): void;
}

/**
 * Calls `onGone` once, with what went away, when the parent or a launcher above this process ends. The
 * checks' timers do not keep the process alive.
 */
export async function watchLaunchers(
  onGone: (what: string) => void,
  options: {
    list?: ListProcesses;
    pid?: number;
    ppid?: () => number;
    /** Whether `deno task` or npm ran this process; by default, whether they left `INIT_CWD`. */
    ranByTask?: boolean;
    intervalMs?: number;
  } = {},
): Promise<LauncherWatch> {
  const { list = listProcesses, pid = Deno.pid, ppid = () => Deno.ppid } = options;
  const parent = ppid();
  const listed = await list();
  // A parent that ended while `ps` listed (a launcher stopped just as the gateway started) is missing from
  // the table, which shows this process re-parented: what it was is then judged as without `ps`, and the
  // parent's check below notices at once that it is gone.
  const table = ppid() === parent ? listed : undefined;
  const above = table ? launchersOf(pid, table) : [];
  const parentWatched = table ? above[0]?.pid === parent : options.ranByTask ?? ranByTask();
  const launchers = above.filter((l) => l.pid !== parent);
  let done = false;
  const gone = (what: string) => {
    if (done) return;
    done = true;
    stop();
    onGone(what);
  };
  const timers: ReturnType<typeof setInterval>[] = [];
  const stop = () => timers.forEach(clearInterval);
  if (parentWatched) {
    const parentTimer = setInterval(() => {
      if (ppid() !== parent) gone(`the parent process ${parent} ended`);
    }, options.intervalMs ?? PARENT_CHECK_MS);
    Deno.unrefTimer(parentTimer as unknown as number);
    timers.push(parentTimer);
  }
  if (launchers.length === 0) return { launchers, parent: parentWatched, stop };
  let asking = false;
  const launcherTimer = setInterval(async () => {
    if (asking || done) return;
    asking = true;
    try {
      const now = await list(launchers.map((l) => l.pid));
      // Not known this time (ps failed): nothing is concluded.
      const ended = now && launchers.find((l) => {
        const seen = now.get(l.pid);
        return !seen || seen.zombie || seen.started !== l.started;
      });
      if (ended) {
        gone(`the launching process ${ended.pid} (${ended.args.split(/\s+/).slice(0, 2).join(" ")}) ended`);
      }
    } finally {
      asking = false;
    }
  }, options.intervalMs ?? LAUNCHER_CHECK_MS);
  Deno.unrefTimer(launcherTimer as unknown as number);
  timers.push(launcherTimer);
  return { launchers, parent: parentWatched, stop };
}
