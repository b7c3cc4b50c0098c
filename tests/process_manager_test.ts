/**
 * Under a process manager: the README's command is `npx --yes deno@2.9.6 task start`, and a manager stops it
 * by signalling the PID it started, npx's (`npm exec`), which dies without passing the signal on to `deno
 * task` and the gateway below it. The gateway notices its launcher is gone and stops as on SIGTERM, so nothing
 * is left listening on the port. Also when `deno task` itself is killed outright.
 */
import assert from "node:assert/strict";
import { eventually, PATIENCE_MS } from "./support/wait_for.ts";
import { freePort } from "./support/listening_ports.ts";
import { hasNpx } from "./support/processes.ts";

const root = new URL("..", import.meta.url).pathname;

/** Whether any process of this machine's network namespace listens on TCP `port`. */
async function listened(port: number): Promise<boolean> {
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    for (const line of (await Deno.readTextFile(table)).trim().split("\n").slice(1)) {
      const [, local, , state] = line.trim().split(/\s+/);
      if (state === "0A" && parseInt(local.split(":").at(-1)!, 16) === port) return true;
    }
  }
  return false;
}

const alive = (pid: number) => {
  try {
    return !Deno.readTextFileSync(`/proc/${pid}/stat`).split(") ")[1].startsWith("Z");
  } catch {
    return false;
  }
};

/** The processes from `pid` up to (not including) `top`, read from /proc. */
function chain(pid: number, top: number): number[] {
  const out: number[] = [];
  for (let at = pid; at > 1 && at !== top && out.length < 10;) {
    out.push(at);
    const stat = Deno.readTextFileSync(`/proc/${at}/stat`);
    at = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
  }
  return out;
}

/**
 * Runs `command` from the repository with the gateway on a free port, waits for its start line, hands the
 * processes between the command and the gateway to `kill`, then waits until nothing listens on the port.
 */
async function stopsWithItsLauncher(
  command: string,
  args: string[],
  kill: (launched: Deno.ChildProcess, between: number[]) => void,
) {
  const dir = await Deno.makeTempDir();
  const port = freePort();
  const child = new Deno.Command(command, {
    args,
    cwd: root,
    env: { PORT: String(port), HOST: "127.0.0.1", GATEWAY_KV: `${dir}/store.kv`, GATEWAY_LOG_FORMAT: "json" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let output = "";
  const drained = Promise.all([child.stdout, child.stderr].map(async (stream) => {
    for await (const text of stream.pipeThrough(new TextDecoderStream())) output += text;
  }));
  const started: number[] = [child.pid];
  try {
    const start = await eventually(
      "the gateway's start line",
      () => output.split("\n").find((line) => line.includes('"event":"gateway.start"')),
      120_000,
    );
    const gatewayPid = JSON.parse(start).pid as number;
    assert.ok(await listened(port));
    const between = chain(gatewayPid, Deno.pid);
    started.push(...between);
    assert.equal(between.at(-1), child.pid, `the gateway runs under the command: ${between}`);
    kill(child, between.slice(1, -1));
    await eventually("nothing listening on the port", async () => !await listened(port), 60_000);
    await eventually("the gateway process to end", () => !alive(gatewayPid), PATIENCE_MS);
    const stopping = output.split("\n").find((line) => line.includes('"event":"gateway.stopping"'));
    assert.match(stopping ?? output, /the (launching|parent) process \d+ .*ended/);
    assert.ok(output.includes('"event":"gateway.stopped"'), output);
  } finally {
    // Whatever is left of what this test started, by PID.
    for (const pid of started) {
      if (alive(pid)) Deno.kill(pid, "SIGKILL");
    }
    await child.status;
    await drained.catch(() => {});
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test({
  name: "SIGTERM to the README's npx command stops the gateway: nothing listens on the port afterwards",
  ignore: Deno.build.os !== "linux" || !await hasNpx(),
  fn: () =>
    stopsWithItsLauncher(
      "npx",
      ["--yes", "deno@2.9.6", "task", "--quiet", "start"],
      (npx) => npx.kill("SIGTERM"),
    ),
});

Deno.test({
  name: "SIGKILL to `deno task start` stops the gateway below it",
  ignore: Deno.build.os !== "linux",
  fn: () =>
    stopsWithItsLauncher(Deno.execPath(), ["task", "--quiet", "start"], (task) => task.kill("SIGKILL")),
});
