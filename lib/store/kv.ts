/**
 * @module Opening the store: the embedded Deno KV file by default, or what GATEWAY_KV names (a path or a KV
 * Connect URL), or under the Deploy profile the platform's own. The gateway and the admin CLI open it the same
 * way so they always meet on one store.
 */
import { withLockRetry } from "./lock_retry.ts";
import { makePrivateDir, makePrivateFiles } from "./private_files.ts";

export const DEFAULT_KV_PATH = "./data/gateway.kv";

export const KV_KEYS = {
  keys: "keys",
  keysByDigest: "keys_by_digest",
  servers: "servers",
  clusters: "clusters",
  users: "users",
  /** Bumped by every admin write; running gateways poll it to drop their caches. */
  generation: ["meta", "generation"] as const,
};

/** A store file's folder that is not there, when it had to be (`GATEWAY_KV`): a typo, not a new store. */
export class StoreFolderMissing extends Error {
  constructor(readonly path: string, readonly folder: string) {
    super(`the folder ${folder} does not exist (the store is not created there: make the folder first)`);
    this.name = "StoreFolderMissing";
  }
}

export interface OpenStoreOptions {
  /**
   * Refuse a file whose folder does not exist instead of creating it: the gateway's `GATEWAY_KV`, where a
   * mistyped path would otherwise open a new, empty store and refuse every key without a word.
   */
  folderMustExist?: boolean;
}

export async function openStore(path?: string, options: OpenStoreOptions = {}): Promise<Deno.Kv> {
  const target = path ?? DEFAULT_KV_PATH;
  const remote = /^https?:\/\//.test(target);
  if (!remote && target !== ":memory:") {
    const dir = target.replace(/[\\/][^\\/]*$/, "");
    if (dir && dir !== target) {
      if (options.folderMustExist) await mustBeFolder(target, dir);
      else await makePrivateDir(dir);
    }
  }
  const kv = await Deno.openKv(target);
  if (!remote && target !== ":memory:") await makePrivateFiles(target);
  return remote || target === ":memory:" ? kv : withLockRetry(kv);
}

async function mustBeFolder(path: string, dir: string): Promise<void> {
  try {
    if ((await Deno.stat(dir)).isDirectory) return;
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  throw new StoreFolderMissing(path, dir);
}

/**
 * The store the platform gives the app, `Deno.openKv()` without a path (the Deploy profile): on Deno Deploy the
 * app's database for its timeline; elsewhere a file the runtime keeps for the origin (`--location`, else the
 * main module or config file) in its own directory, made by the runtime, not the program, so no write
 * permission is asked. The admin CLI reaches that file with `GATEWAY_KV` (its path under `deno info`'s "Origin
 * storage"), hence the lock retry.
 */
export async function openPlatformStore(): Promise<Deno.Kv> {
  return withLockRetry(await Deno.openKv());
}

export async function readGeneration(kv: Deno.Kv): Promise<bigint> {
  const entry = await kv.get<Deno.KvU64>(KV_KEYS.generation);
  return entry.value?.value ?? 0n;
}

/** Adds the generation bump to an admin write, so readers see the change and the bump together. */
export function bumpGeneration(op: Deno.AtomicOperation): Deno.AtomicOperation {
  return op.sum(KV_KEYS.generation, 1n);
}
