/**
 * @module Stopping when the command that started the gateway goes away. `npx deno@… task start` runs the
 * gateway four processes down: `npm exec` → `sh -c deno task start` → `deno task` → the gateway. A process
 * manager that stops the service signals the PID it started, `npm exec`, which dies without passing the
 * signal on; the rest are re-parented and the gateway would keep serving on its port. So the gateway notes
 * the launchers above it at start (its parent, and above that every process that is `deno task`, a shell
 * running deno, `npm exec` or `npx`), and once a second checks that each is still there; when one is gone
 * it stops as on SIGTERM (drained, every record written).
 *
 * The first ancestor that is none of these (a shell, a process manager, the test runner) is not watched:
 * `nohup npx deno task start &` must outlive the shell that started it. A launcher is known by its PID and its
 * start time, so a PID reused by another process does not pass for it. Linux only (`/proc`), and only with
 * read access there; elsewhere nothing is watched, and process managers use a command whose PID is the
 * gateway's (README, "Under a process manager").
 */

/** A process as `/proc/PID/stat` and `cmdline` show it. */
export interface ProcessInfo {
  pid: number;
  ppid: number;
  /** Clock ticks after boot: with the PID, names one process for good. */
  startTime: string;
  argv: string[];
}

export type ReadProcess = (pid: number) => ProcessInfo | undefined;

const CHECK_MS = 1_000;

/** What Linux says of `pid`; undefined once it is gone (or unreadable). */
export function readProcess(pid: number): ProcessInfo | undefined {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    // The command name, in parentheses, may hold spaces and parentheses itself.
    const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const argv = Deno.readTextFileSync(`/proc/${pid}/cmdline`).split("\0").filter(Boolean);
    // State is rest[0]; a zombie has ended already.
    if (rest[0] === "Z") return undefined;
    return { pid, ppid: Number(rest[1]), startTime: rest[19], argv };
  } catch {
    return undefined;
  }
}

const base = (path: string) => path.slice(path.lastIndexOf("/") + 1);

/** Whether a process only runs the gateway's command for someone else: its end means the command's end. */
export function isLauncher(argv: readonly string[]): boolean {
  if (argv.length === 0) return false;
  // npm renames its process ("npm exec deno@2.9.6 task start") and pads the title with spaces.
  const words = argv.join(" ").trim().split(/\s+/);
  const name = base(words[0]);
  if (name === "npx" || (name === "npm" && words[1] === "exec")) return true;
  if (name === "node") return words.some((w) => /(^|\/)(npx|npm)(-cli\.js)?$/.test(w));
  if (name === "deno") return words[1] === "task";
  if (["sh", "bash", "dash"].includes(name) && words[1] === "-c") {
    return /(^|[\s'"/])deno['"]?(\s|$)/.test(words.slice(2).join(" "));
  }
  return false;
}

/** The launchers above `pid`, nearest first: its ancestors while they are launchers. */
export function launchersOf(pid: number, read: ReadProcess = readProcess): ProcessInfo[] {
  const out: ProcessInfo[] = [];
  let current = read(pid);
  while (current && current.ppid > 1) {
    const parent = read(current.ppid);
    if (!parent || !isLauncher(parent.argv)) break;
    out.push(parent);
    current = parent;
  }
  return out;
}

/** Whether a launcher noted at start is still that process. */
function alive(launcher: ProcessInfo, read: ReadProcess): boolean {
  const now = read(launcher.pid);
  return now !== undefined && now.startTime === launcher.startTime;
}

export interface LauncherWatch {
  /** The launchers watched; empty: none, or this system cannot tell. */
  launchers: readonly ProcessInfo[];
  stop(): void;
}

/**
 * Calls `onGone` once, with which launcher went away, when one of the launchers above this process ends.
 * The check's timer does not keep the process alive.
 */
export function watchLaunchers(
  onGone: (launcher: ProcessInfo) => void,
  options: { read?: ReadProcess; pid?: number; intervalMs?: number } = {},
): LauncherWatch {
  const { read = readProcess, pid = Deno.pid, intervalMs = CHECK_MS } = options;
  if (!options.read && !canReadProc()) return { launchers: [], stop: () => {} };
  const launchers = launchersOf(pid, read);
  if (launchers.length === 0) return { launchers, stop: () => {} };
  const timer = setInterval(() => {
    const gone = launchers.find((launcher) => !alive(launcher, read));
    if (!gone) return;
    clearInterval(timer);
    onGone(gone);
  }, intervalMs);
  Deno.unrefTimer(timer);
  return { launchers, stop: () => clearInterval(timer) };
}

function canReadProc(): boolean {
  if (Deno.build.os !== "linux") return false;
  // Asked first, so that a runtime without read access does not prompt for it.
  return Deno.permissions.querySync({ name: "read", path: "/proc" }).state === "granted";
}
