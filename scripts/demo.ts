/**
 * `deno task demo`: the gateway on a fresh temporary store, in front of a built-in stand-in backend, with a demo
 * key, and the commands to try it printed ready to paste. Needs no GPU and no Ollama. The gateway is the real
 * one (`main.ts`, in its own process, as `deno task start` runs it); Ctrl-C (SIGINT) or SIGTERM stops it and
 * the backend and removes the store. PORT (default 8000) and HOST (default 127.0.0.1) choose where it listens.
 */
import { stopProcess } from "./stop_process.ts";
import { Catalog } from "../lib/store/catalog.ts";
import { createKey } from "../lib/store/keys.ts";
import { openStore } from "../lib/store/kv.ts";
import { basePolicy } from "../lib/store/records.ts";
import { DEMO_MODEL, startDemoBackend } from "./demo_backend.ts";
import { DEMO_QUESTION, demoCommands } from "./demo_commands.ts";

const root = new URL("..", import.meta.url).pathname;
const READY_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 10_000;

const port = Number(Deno.env.get("PORT") ?? 8000);
const host = Deno.env.get("HOST") ?? "127.0.0.1";
const say = (text: string) => console.log(text);
const warn = (text: string) => console.error(text);

/** Refuses early and plainly when the port is taken, before anything is created. */
function checkPortFree(): boolean {
  try {
    Deno.listen({ hostname: host, port }).close();
    return true;
  } catch (error) {
    if (!(error instanceof Deno.errors.AddrInUse)) throw error;
    warn(`Port ${port} on ${host} is already in use. Choose another one, e.g.:\n`);
    warn(`    PORT=${port === 8080 ? 8081 : 8080} npx --yes deno@2.9.6 task demo\n`);
    return false;
  }
}

/** A store with the backend registered and one key; returns the key's secret. */
async function prepareStore(path: string, backendUrl: string): Promise<string> {
  const kv = await openStore(path);
  try {
    await new Catalog(kv).servers.add({
      name: "demo",
      url: backendUrl,
      kind: "ollama",
      models: [{ tag: DEMO_MODEL }],
      weight: 1,
      enabled: true,
    });
    return (await createKey(kv, { ...basePolicy(DEMO_MODEL), name: "demo" })).secret;
  } finally {
    kv.close();
  }
}

function startGateway(storePath: string) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-net", "--allow-env", "--allow-read", "--allow-write", "main.ts"],
    cwd: root,
    env: { PORT: String(port), HOST: host, GATEWAY_KV: storePath },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const { promise: listening, resolve } = Promise.withResolvers<boolean>();
  let output = "";
  const watch = async (stream: ReadableStream<Uint8Array<ArrayBuffer>>, echo: boolean) => {
    for await (const text of stream.pipeThrough(new TextDecoderStream())) {
      // Once listening, what the gateway says on stderr (its own errors) is passed on.
      if (echo && output.includes("listening on")) await Deno.stderr.write(new TextEncoder().encode(text));
      output = (output + text).slice(-8_000);
      if (/listening on http:\/\//.test(output)) resolve(true);
    }
  };
  Promise.all([watch(child.stdout, false), watch(child.stderr, true)]).catch(() => {});
  child.status.then(() => resolve(false));
  const timer = setTimeout(() => resolve(false), READY_TIMEOUT_MS);
  listening.then(() => clearTimeout(timer));
  return { child, listening, output: () => output };
}

/** Asks once through the gateway, so the printed commands are known to work when they appear. */
async function firstAnswer(baseUrl: string, key: string): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let last = "";
  while (Date.now() < deadline) {
    const res = await fetch(`${baseUrl}/v1/chat/completions`, {
      method: "POST",
      headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
      body: JSON.stringify({ model: "any", messages: [{ role: "user", content: DEMO_QUESTION }] }),
    }).catch((e) => e as Error);
    if (res instanceof Response) {
      last = `${res.status} ${await res.text()}`;
      if (res.status === 200) return;
    } else last = res.message;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the gateway did not answer the demo question: ${last}`);
}

async function main(): Promise<number> {
  if (!checkPortFree()) return 1;
  const dir = await Deno.makeTempDir({ prefix: "gateway-demo-" });
  const storePath = `${dir}/gateway.kv`;
  const backend = startDemoBackend();
  let gateway: ReturnType<typeof startGateway> | undefined;
  const stopSignal = Promise.withResolvers<string>();
  const onSignal = (name: string) => () => stopSignal.resolve(name);
  const signals = [["SIGINT", onSignal("SIGINT")], ["SIGTERM", onSignal("SIGTERM")]] as const;
  for (const [name, handler] of signals) Deno.addSignalListener(name, handler);
  try {
    const key = await prepareStore(storePath, backend.url);
    gateway = startGateway(storePath);
    if (!(await gateway.listening)) {
      const output = gateway.output();
      warn(
        /AddrInUse|address already in use/i.test(output)
          ? `Port ${port} on ${host} is already in use; set PORT to another one.`
          : `The gateway did not start:\n${output}`,
      );
      return 1;
    }
    const baseUrl = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
    await firstAnswer(baseUrl, key);
    say(`The demo gateway is ready on ${baseUrl}: a stand-in backend answers, no GPU or Ollama needed.`);
    say(`Store: ${storePath} (removed when the demo stops)`);
    say(`Demo key: ${key}\n`);
    say("Paste any of these into another terminal:\n");
    for (const { title, command } of demoCommands(baseUrl, key)) say(`# ${title}\n${command}\n`);
    say("Stop the demo with Ctrl-C.");
    const ended = await Promise.race([stopSignal.promise, gateway.child.status.then(() => "exit")]);
    if (ended === "exit") {
      warn(`The gateway stopped unexpectedly:\n${gateway.output()}`);
      return 1;
    }
    say("\nStopping the demo…");
    return 0;
  } finally {
    // Ctrl-C may have reached the gateway already (same process group); stopping it again is harmless.
    if (gateway) await stopProcess(gateway.child, STOP_GRACE_MS);
    await backend.close();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    for (const [name, handler] of signals) Deno.removeSignalListener(name, handler);
  }
}

Deno.exit(await main());
