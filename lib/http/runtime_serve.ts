/**
 * @module Whether the runtime serves this process (`deno serve`, with `--parallel` or not) rather than the
 * gateway (`deno run`, `deno task start`). Deno 2 says so nowhere a program can ask: `import.meta.main` is
 * true under both, and neither `Deno.args` nor the environment differ. The command line does, and Linux shows
 * it in /proc/self/cmdline. Elsewhere, or without read access to that file, the answer is "not served", so
 * `deno task start` keeps its own listener everywhere.
 */

const COMMAND_LINE = "/proc/self/cmdline";

export interface RuntimeServe {
  /** `--parallel`: more isolates serve the same module, each its own gateway. */
  parallel: boolean;
}

/** How `deno serve` runs this process; undefined when it does not (or cannot be told). */
export function runtimeServe(commandLine = readCommandLine()): RuntimeServe | undefined {
  if (commandLine === undefined) return undefined;
  const args = commandLine.split("\0").slice(1);
  // The subcommand is the first word that is not a flag: the runtime's own flags may come before it (`-q`).
  if (args.find((arg) => !arg.startsWith("-")) !== "serve") return undefined;
  return { parallel: args.includes("--parallel") };
}

function readCommandLine(): string | undefined {
  if (Deno.build.os !== "linux") return undefined;
  // Asked first, so that a runtime without the permission does not prompt for it.
  if (Deno.permissions.querySync({ name: "read", path: COMMAND_LINE }).state !== "granted") return undefined;
  try {
    return Deno.readTextFileSync(COMMAND_LINE);
  } catch {
    return undefined;
  }
}
