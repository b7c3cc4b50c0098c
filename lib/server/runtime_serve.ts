/**
 * @module Whether the runtime serves this process (`deno serve`, with `--parallel` or not) rather than the
 * gateway (`deno run`, `deno task start`). Deno 2 says so nowhere a program can ask: `import.meta.main` is
 * true under both, neither `Deno.args` nor the environment differ, and the default export is checked only
 * once the module has run, too late to decide whether to listen. The command line differs; Linux shows it in
 * /proc/self/cmdline, which Deno lets a program read only with all permissions (`-A`). Without them, or on
 * another system, the answer is "not served", so `deno run` keeps its own listener everywhere. The Deploy
 * profile does not ask (main.ts): the runtime serves it everywhere it runs.
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
  // Asked first, so that a runtime without read access does not prompt for it.
  if (Deno.permissions.querySync({ name: "read", path: COMMAND_LINE }).state !== "granted") return undefined;
  try {
    return Deno.readTextFileSync(COMMAND_LINE);
  } catch {
    // NotCapable: read access is granted, but not all permissions.
    return undefined;
  }
}
