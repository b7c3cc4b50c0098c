/**
 * @module The store on disk readable by its owner only. The store holds server API keys (and, in its write-ahead
 * log, values already replaced), so a folder the gateway creates for it is 0700 and the database file 0600,
 * whatever the umask. SQLite creates the `-wal` and `-shm` files with the database file's own mode, so once
 * that is 0600 they follow, also when they are made anew; the ones already there are set too. A folder that
 * existed before is left as its owner made it.
 */

const SIDE_FILES = ["", "-wal", "-shm"];

/** Creates the folders of `dir` that are missing, each private. */
export async function makePrivateDir(dir: string): Promise<void> {
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
}

/** Makes the database file at `path` and its side files private; where modes do not exist (Windows), nothing. */
export async function makePrivateFiles(path: string): Promise<void> {
  for (const suffix of SIDE_FILES) {
    try {
      await Deno.chmod(path + suffix, 0o600);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotSupported) continue;
      throw error;
    }
  }
}
