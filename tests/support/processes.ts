/**
 * The gateway and the admin CLI as real processes, as an operator runs them: `deno task start` (or
 * `deno task start:parallel`) and `deno task admin`, all on one store file.
 */
import assert from "node:assert/strict";

const root = new URL("../..", import.meta.url).pathname;

export async function admin(env: Record<string, string>, ...args: string[]) {
  const out = await adminCli(env, [...args, "--json"]);
  assert.equal(out.code, 0, out.stderr);
  return JSON.parse(out.stdout);
}

/** `deno task admin ARGS`: its exit status and what it printed, unchecked. */
export async function adminCli(env: Record<string, string>, args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["task", "--quiet", "admin", ...args],
    cwd: root,
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder();
  return { code: out.code, stdout: text.decode(out.stdout), stderr: text.decode(out.stderr) };
}

export interface GatewayProcess {
  child: Deno.ChildProcess;
  url: string;
  /** What the process printed so far, on stdout and stderr. */
  output(): string;
  /** SIGTERM, then the exit status. */
  stop(): Promise<Deno.CommandStatus>;
}

/**
 * Starts a gateway process and resolves once it listens; `args` replaces `task start`. With `fdLimit` it runs
 * under that many file descriptors at most (`ulimit -n`, through bash, which then becomes the gateway).
 */
export async function startGateway(
  env: Record<string, string>,
  args = ["task", "--quiet", "start"],
  { fdLimit }: { fdLimit?: number } = {},
): Promise<GatewayProcess> {
  const limited = fdLimit === undefined
    ? { command: Deno.execPath(), args }
    : { command: "bash", args: ["-c", `ulimit -n ${fdLimit} && exec "$0" "$@"`, Deno.execPath(), ...args] };
  const child = new Deno.Command(limited.command, {
    args: limited.args,
    cwd: root,
    env: { PORT: "0", HOST: "127.0.0.1", ...env },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  // `deno task start` announces itself on stdout, `deno serve` on stderr: watch both, keep both drained (a
  // full pipe would block the child) and pass stderr on, so a failing child still explains itself.
  const { promise: announced, resolve, reject } = Promise.withResolvers<string>();
  const listening = /[Ll]istening on (http:\/\/[^\s/"]+)/;
  let seen = "";
  const watch = async (stream: ReadableStream<Uint8Array>, echo: boolean) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) {
      const text = decoder.decode(chunk, { stream: true });
      if (echo) await Deno.stderr.write(new TextEncoder().encode(text));
      seen += text;
      const match = listening.exec(seen);
      if (match) resolve(match[1]);
    }
    reject(new Error(`gateway exited before listening: ${seen}`));
  };
  watch(child.stdout, false).catch(reject);
  watch(child.stderr, true).catch(reject);
  const timer = setTimeout(() => reject(new Error(`gateway did not listen within 60 s: ${seen}`)), 60_000);
  let url: string;
  try {
    url = (await announced).replace("0.0.0.0", "127.0.0.1");
  } catch (error) {
    child.kill("SIGKILL");
    await child.status;
    throw error;
  } finally {
    clearTimeout(timer);
  }
  let stopped: Promise<Deno.CommandStatus> | undefined;
  return {
    child,
    url,
    output: () => seen,
    stop: () => {
      stopped ??= (child.kill("SIGTERM"), child.status);
      return stopped;
    },
  };
}

/** POSTs a small chat in format A; returns the status. */
export async function chat(url: string, secret: string): Promise<number> {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${secret}` },
    body: JSON.stringify({ model: "x", messages: [{ role: "user", content: "hi" }] }),
  });
  await res.body?.cancel();
  return res.status;
}

/** Polls until `status` is seen; returns how long it took. */
export async function timeUntil(url: string, secret: string, status: number, limitMs = 3000) {
  const start = performance.now();
  while (performance.now() - start < limitMs) {
    if (await chat(url, secret) === status) return performance.now() - start;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`never answered ${status}`);
}

/** Whether `npx` runs here (the README's commands need it). */
export async function hasNpx(): Promise<boolean> {
  try {
    return (await new Deno.Command("npx", { args: ["--version"], stdout: "null", stderr: "null" }).output())
      .success;
  } catch {
    return false;
  }
}
