/** Stopping a child process: a polite signal, then SIGKILL if it is still there after a grace period. */
export async function stopProcess(
  child: Deno.ChildProcess,
  graceMs: number,
  signal: Deno.Signal = "SIGTERM",
): Promise<Deno.CommandStatus> {
  const kill = (how: Deno.Signal) => {
    try {
      child.kill(how);
    } catch {
      // It already exited.
    }
  };
  kill(signal);
  const grace = setTimeout(() => kill("SIGKILL"), graceMs);
  try {
    return await child.status;
  } finally {
    clearTimeout(grace);
  }
}
