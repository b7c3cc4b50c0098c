/**
 * @module Which code is running, for the start line: the commit of the checkout the gateway runs from (its
 * first 12 hex digits), read from the repository's `.git` when there is one and it may be read; otherwise
 * (a copy without history, Deno Deploy, no read access) undefined. The gateway has no release numbers: a
 * commit names what runs exactly.
 */

const GIT = new URL("../../.git/", import.meta.url);

function readable(url: URL): boolean {
  if (url.protocol !== "file:") return false;
  return Deno.permissions.querySync({ name: "read", path: url }).state === "granted";
}

export function codeVersion(git: URL = GIT): string | undefined {
  try {
    if (!readable(git)) return undefined;
    const head = Deno.readTextFileSync(new URL("HEAD", git)).trim();
    const ref = /^ref: (.+)$/.exec(head)?.[1];
    let commit = ref === undefined ? head : undefined;
    if (ref !== undefined) {
      try {
        commit = Deno.readTextFileSync(new URL(ref, git)).trim();
      } catch {
        // Packed by `git gc` or a fresh clone: `<commit> <ref>` lines.
        const packed = Deno.readTextFileSync(new URL("packed-refs", git));
        commit = packed.split("\n").find((line) => line.endsWith(` ${ref}`))?.split(" ")[0];
      }
    }
    return commit && /^[0-9a-f]{40,64}$/.test(commit) ? commit.slice(0, 12) : undefined;
  } catch {
    return undefined;
  }
}
