/**
 * `deno task demo` as a newcomer meets it: start it, paste every command it prints into bash (curl in both
 * formats, the OpenAI SDK and the ollama client, whole and streamed) and see the demo's answer come back;
 * then stop it and find its temporary store gone. And a taken port is refused in plain words.
 */
import assert from "node:assert/strict";
import { demoAnswer } from "../scripts/demo_backend.ts";
import { DEMO_QUESTION } from "../scripts/demo_commands.ts";
import { freePort } from "./support/listening_ports.ts";
import { hasNpx } from "./support/processes.ts";

const root = new URL("..", import.meta.url).pathname;
const DEMO_ARGS = [
  "run",
  "--allow-net",
  "--allow-env",
  "--allow-read",
  "--allow-write",
  "--allow-run",
  "scripts/demo.ts",
];
const READY_MARKER = "Stop the demo with Ctrl-C.";
const expected = demoAnswer([{ role: "user", content: DEMO_QUESTION }]);

function startDemo(port: number) {
  const child = new Deno.Command(Deno.execPath(), {
    args: DEMO_ARGS,
    cwd: root,
    env: { PORT: String(port) },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let stdout = "";
  let stderr = "";
  const collect = async (stream: ReadableStream<Uint8Array<ArrayBuffer>>, add: (text: string) => void) => {
    for await (const text of stream.pipeThrough(new TextDecoderStream())) add(text);
  };
  const drained = Promise.all([
    collect(child.stdout, (t) => stdout += t),
    collect(child.stderr, (t) => stderr += t),
  ]);
  return { child, drained, stdout: () => stdout, stderr: () => stderr };
}

/** Polls until `ready()` or the child exits; bounded. */
async function waitFor(ready: () => boolean, child: Deno.ChildProcess, what: string, limitMs = 90_000) {
  let exited = false;
  child.status.then(() => exited = true);
  const start = Date.now();
  while (!ready()) {
    if (exited) throw new Error(`the demo exited before ${what}`);
    if (Date.now() - start > limitMs) throw new Error(`no ${what} within ${limitMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The printed commands: the lines after each `# title` up to the blank line that ends them. */
function printedCommands(stdout: string): { title: string; command: string }[] {
  const blocks = stdout.split(/\n\s*\n/);
  return blocks.flatMap((block) => {
    const match = /^# (.+)\n([\s\S]+)$/.exec(block.trim());
    return match ? [{ title: match[1], command: match[2] }] : [];
  });
}

/** The answer text in what a command printed, whatever its format. */
function answerIn(output: string): string {
  const text = output.trim();
  if (text.startsWith("data: ")) {
    const events = text.split("\n\n").map((e) => e.replace(/^data: /, ""));
    assert.equal(events.at(-1), "[DONE]");
    return events.slice(0, -1).map((e) => JSON.parse(e).choices[0]?.delta?.content ?? "").join("");
  }
  if (text.startsWith("{")) {
    const lines = text.split("\n").map((l) => JSON.parse(l));
    if (lines[0].choices) return lines[0].choices[0].message.content;
    assert.equal(lines.at(-1).done, true);
    return lines.map((l) => l.message.content).join("");
  }
  return text;
}

Deno.test("the demo's printed commands all work, and stopping it removes its store", async () => {
  const demo = startDemo(freePort());
  const scratch = await Deno.makeTempDir({ prefix: "demo-test-" });
  try {
    await waitFor(() => demo.stdout().includes(READY_MARKER), demo.child, "ready message");
    const store = /^Store: (\S+)/m.exec(demo.stdout())?.[1];
    assert.ok(store, demo.stdout());
    await Deno.stat(store);
    const commands = printedCommands(demo.stdout());
    assert.equal(commands.filter((c) => c.command.startsWith("curl ")).length, 4, demo.stdout());
    assert.equal(commands.filter((c) => c.command.startsWith("npx --yes deno@2.9.6 eval ")).length, 4);
    // Without npx the same Deno runs the SDK lines, which is what npx would fetch.
    const npx = await hasNpx();
    for (const { title, command } of commands) {
      const line = npx ? command : command.replace("npx --yes deno@2.9.6", `'${Deno.execPath()}'`);
      // Run where there is no deno.json, as on a machine that has only the printed line.
      const out = await new Deno.Command("bash", {
        args: ["-c", line],
        cwd: scratch,
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).output();
      const stdout = new TextDecoder().decode(out.stdout);
      assert.equal(out.code, 0, `${title}: ${new TextDecoder().decode(out.stderr)}`);
      assert.equal(answerIn(stdout), expected, `${title} printed: ${stdout}`);
    }

    demo.child.kill("SIGTERM");
    assert.equal((await demo.child.status).code, 0, demo.stderr());
    await assert.rejects(Deno.stat(store.replace(/\/[^/]+$/, "")), Deno.errors.NotFound);
  } finally {
    try {
      demo.child.kill("SIGKILL");
    } catch {
      // Already stopped.
    }
    await demo.child.status;
    await demo.drained;
    await Deno.remove(scratch, { recursive: true });
  }
});

Deno.test("the demo says so plainly when its port is taken", async () => {
  const taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const demo = startDemo((taken.addr as Deno.NetAddr).port);
  const limit = setTimeout(() => demo.child.kill("SIGKILL"), 60_000);
  try {
    const status = await demo.child.status;
    await demo.drained;
    assert.equal(status.code, 1);
    assert.match(demo.stderr(), new RegExp(`Port ${(taken.addr as Deno.NetAddr).port} .*already in use`));
    assert.doesNotMatch(demo.stdout(), /Demo key/);
  } finally {
    clearTimeout(limit);
    taken.close();
  }
});
