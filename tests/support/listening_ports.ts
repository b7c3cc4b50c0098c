/**
 * @module The TCP ports a process listens on, read from Linux's /proc, so a test can check that a server opens
 * no port beyond the ones it is meant to; a port free for a test's server; whether a port takes connections.
 */

/**
 * The TCP ports the process listens on: its sockets (/proc/<pid>/fd) in LISTEN state in its network
 * namespace's tables (/proc/<pid>/net/tcp and tcp6).
 */
export async function listeningPorts(pid: number): Promise<number[]> {
  const inodes = new Set<string>();
  for await (const fd of Deno.readDir(`/proc/${pid}/fd`)) {
    try {
      const socket = /^socket:\[(\d+)\]$/.exec(await Deno.readLink(`/proc/${pid}/fd/${fd.name}`));
      if (socket) inodes.add(socket[1]);
    } catch (error) {
      // Closed since the listing.
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
  }
  const ports: number[] = [];
  for (const table of ["tcp", "tcp6"]) {
    for (const line of (await Deno.readTextFile(`/proc/${pid}/net/${table}`)).trim().split("\n").slice(1)) {
      const [, local, , state, , , , , , inode] = line.trim().split(/\s+/);
      if (state === "0A" && inodes.has(inode)) ports.push(parseInt(local.split(":").at(-1)!, 16));
    }
  }
  return ports.sort();
}

/** A port free on 127.0.0.1 right now, for a process the test starts on it. */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr;
  listener.close();
  return port;
}

/** Whether anything accepts a connection on 127.0.0.1:`port` now. */
export async function listensOn(port: number): Promise<boolean> {
  try {
    (await Deno.connect({ hostname: "127.0.0.1", port })).close();
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.ConnectionRefused) return false;
    throw error;
  }
}
