/**
 * A gateway that cannot start says why in one line naming the setting and its value, and exits 1, with no
 * stack trace: a value that is not a number, a store folder that does not exist (not created), a port in use,
 * a host name that does not resolve, and the same on the metrics port.
 */
import assert from "node:assert/strict";
import { within } from "./support/wait_for.ts";

const root = new URL("..", import.meta.url).pathname;

/** `deno task start` with `env`: its exit code and what it wrote, with the task runner's own line left out. */
async function start(env: Record<string, string>) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["task", "--quiet", "start"],
    cwd: root,
    env: { HOST: "127.0.0.1", PORT: "0", ...env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  try {
    const out = await within("the gateway to give up", child.output());
    const text = new TextDecoder();
    return { code: out.code, output: (text.decode(out.stdout) + text.decode(out.stderr)).trim() };
  } finally {
    try {
      child.kill("SIGKILL");
    } catch {
      // It exited, as it should.
    }
  }
}

/** One line, at level ERROR, naming `setting` and `value`, with no stack trace. */
function assertOneLine(output: string, setting: string, value: string, reason: RegExp) {
  const lines = output.split("\n");
  assert.equal(lines.length, 1, output);
  assert.match(lines[0], /^\d{4}-\d\d-\d\dT[\d:.]+Z ERROR gateway\.start_failed: cannot start: /, output);
  assert.ok(lines[0].includes(`${setting}=${JSON.stringify(value)}`), `names ${setting}=${value}: ${output}`);
  assert.match(lines[0], reason);
  assert.doesNotMatch(output, /\s+at |Uncaught|Stack backtrace/);
}

Deno.test("start-up failure: PORT=abc names the setting and the value, exit 1", async () => {
  const { code, output } = await start({ PORT: "abc" });
  assert.equal(code, 1, output);
  assertOneLine(output, "PORT", "abc", /expected number/);
});

Deno.test("start-up failure: an unknown GATEWAY_LOG_LEVEL, exit 1", async () => {
  const { code, output } = await start({ GATEWAY_LOG_LEVEL: "loud" });
  assert.equal(code, 1, output);
  assertOneLine(output, "GATEWAY_LOG_LEVEL", "loud", /debug|info/);
});

Deno.test("start-up failure: GATEWAY_KV in a folder that does not exist is refused, not created", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/nonexistent/dir/x.kv`;
    const { code, output } = await start({ GATEWAY_KV: path });
    assert.equal(code, 1, output);
    assertOneLine(output, "GATEWAY_KV", path, /folder .*nonexistent\/dir does not exist/);
    assert.deepEqual([...Deno.readDirSync(dir)], [], "nothing was created");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("start-up failure: a port in use, a host that does not resolve, exit 1", async () => {
  const dir = await Deno.makeTempDir();
  const taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    const port = String(taken.addr.port);
    const busy = await start({ GATEWAY_KV: `${dir}/a.kv`, PORT: port });
    assert.equal(busy.code, 1, busy.output);
    assertOneLine(busy.output, "PORT", port, /already in use/);
    assert.ok(busy.output.includes(`HOST="127.0.0.1"`), busy.output);

    const host = "no-such-host.invalid";
    const unknown = await start({ GATEWAY_KV: `${dir}/b.kv`, HOST: host });
    assert.equal(unknown.code, 1, unknown.output);
    assertOneLine(unknown.output, "HOST", host, /lookup|not known|resolve/i);

    const metrics = await start({ GATEWAY_KV: `${dir}/c.kv`, GATEWAY_METRICS_PORT: port });
    assert.equal(metrics.code, 1, metrics.output);
    assertOneLine(metrics.output, "GATEWAY_METRICS_PORT", port, /already in use/);
  } finally {
    taken.close();
    await Deno.remove(dir, { recursive: true });
  }
});
