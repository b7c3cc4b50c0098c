/**
 * The gateway under test, set up as an operator would: a fresh store file, the admin CLI registering the
 * backend and creating a user and a key with every limit set (high enough never to refuse), then `main.ts`
 * in its own process with the usage ledger on. Started with `deno run` rather than `deno task start`, so the
 * PID is the gateway's own (its memory is read from /proc and signals reach it directly).
 */
import { type Child, runDeno, spawnDeno } from "./spawn.ts";
import { benchTargets } from "./targets.ts";

const HIGH = "1000000000";
export const BENCH_MODEL = "m1";

export interface BenchGateway {
  child: Child;
  secret: string;
  /** The folder holding the store; removed by `close`. */
  dir: string;
  /** From spawning the process to its listening. */
  spawnToListenMs: number;
  close(): Promise<void>;
}

export async function admin(env: Record<string, string>, ...args: string[]) {
  return JSON.parse(await runDeno(["task", "--quiet", "admin", ...args, "--json"], env));
}

/** Flags before the script, e.g. `["--cpu-prof", "--cpu-prof-dir=…"]`. */
export async function startBenchGateway(
  backendUrl: string,
  runtimeFlags: string[] = [],
): Promise<BenchGateway> {
  const dir = await Deno.makeTempDir({ prefix: "gateway-bench-" });
  const env = { GATEWAY_KV: `${dir}/gateway.kv` };
  let child: Child | undefined;
  try {
    await admin(env, "server", "add", "--name", "bench", "--url", backendUrl, "--model", BENCH_MODEL);
    await admin(
      env,
      ...["user", "add", "--name", "bench", "--daily-tokens", HIGH, "--weekly-tokens", HIGH],
      ...["--monthly-tokens", HIGH],
    );
    const key = await admin(
      env,
      ...["key", "create", "--model", BENCH_MODEL, "--name", "bench", "--user", "bench", "--rpm", HIGH],
      ...["--daily-tokens", HIGH, "--weekly-tokens", HIGH, "--monthly-tokens", HIGH],
    );
    const args = [...await startTaskFlags(), ...runtimeFlags, "main.ts"];
    const spawned = performance.now();
    child = await spawnDeno({ name: "gateway", args, env: { ...env, PORT: "0", HOST: "127.0.0.1" } });
    const started = child;
    return {
      child: started,
      secret: key.key,
      dir,
      spawnToListenMs: performance.now() - spawned,
      close: async () => {
        await started.stop();
        await Deno.remove(dir, { recursive: true });
      },
    };
  } catch (error) {
    await child?.stop();
    await Deno.remove(dir, { recursive: true });
    throw error;
  }
}

/** `deno task start` without `deno` and the script: the bench runs the gateway exactly as operators do. */
export async function startTaskFlags(): Promise<string[]> {
  const config = JSON.parse(await Deno.readTextFile(new URL("../../deno.json", import.meta.url)));
  const words = (config.tasks.start as string).split(/\s+/);
  if (words[0] !== "deno" || words.at(-1) !== "main.ts") {
    throw new Error(`unexpected start task: ${config.tasks.start}`);
  }
  return words.slice(1, -1);
}

export interface KeyedGateway {
  child: Child;
  /** Each key's secret, by the name it was asked for under. */
  secrets: Record<string, string>;
  stop(): Promise<void>;
}

/**
 * The gateway on the store `env` names (`GATEWAY_KV`, with `DENO_KV_ACCESS_TOKEN` for a network store), the
 * backend registered and one key per entry of `keys` (its `key create` flags beyond the model and the name).
 * The store is the caller's to remove.
 */
export async function startKeyedGateway(
  name: string,
  backendUrl: string,
  env: Record<string, string>,
  keys: Record<string, string[]>,
): Promise<KeyedGateway> {
  await admin(env, "server", "add", "--name", "bench", "--url", backendUrl, "--model", BENCH_MODEL);
  const secrets: Record<string, string> = {};
  for (const [key, flags] of Object.entries(keys)) {
    secrets[key] = (await admin(env, "key", "create", "--model", BENCH_MODEL, "--name", key, ...flags)).key;
  }
  const child = await spawnDeno({
    name,
    args: [...await startTaskFlags(), "main.ts"],
    env: { ...env, PORT: "0", HOST: "127.0.0.1" },
  });
  return { child, secrets, stop: async () => void await child.stop() };
}

/**
 * The bench's three processes: the fast backend, the bare proxy in front of it and the gateway in front of it
 * (with its key), and the targets they make. `stop` ends all three.
 */
export async function startBenchTrio() {
  const children: Child[] = [];
  let gateway: BenchGateway | undefined;
  const stop = async () => {
    await gateway?.close();
    for (const child of children.reverse()) await child.stop();
  };
  try {
    const backend = await spawnDeno({
      name: "backend",
      args: ["run", "--allow-net", "bench/fast_backend.ts"],
    });
    children.push(backend);
    const bare = await spawnDeno({
      name: "bare proxy",
      args: ["run", "--allow-net", "bench/bare_proxy.ts", backend.url],
    });
    children.push(bare);
    gateway = await startBenchGateway(backend.url);
    const urls = { backend: backend.url, bare: bare.url, gateway: gateway.child.url };
    return { backend, bare, gateway, targets: benchTargets(urls, gateway.secret), stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
