/**
 * Time to first byte of a streamed answer: straight to a fake Ollama vs through the gateway (full pipeline:
 * key lookup, shaping, routing, usage ledger on a store file). In-process, so a relative figure: the proper
 * load test with an external generator is the HTTP bench.
 */
import { defaultConfig } from "../lib/config.ts";
import { createDeps } from "../lib/deps.ts";
import { buildApp } from "../lib/http/app.ts";
import { Catalog } from "../lib/store/catalog.ts";
import { createKey } from "../lib/store/keys.ts";
import { basePolicy } from "../lib/store/records.ts";
import { manifest } from "../routes.gen.ts";
import { FakeOllama } from "../tests/fakes/fake_ollama.ts";

const dir = await Deno.makeTempDir();
const kv = await Deno.openKv(`${dir}/bench.kv`);
const fake = FakeOllama.start("bench");
fake.reply = () => ({ content: "one two three four five six seven eight" });
await new Catalog(kv).servers.add({
  name: "b",
  url: fake.url,
  kind: "ollama",
  models: [{ tag: "m1" }],
  weight: 1,
  enabled: true,
});
const { secret } = await createKey(kv, basePolicy("m1"));
const deps = await createDeps(defaultConfig(), kv);
const app = buildApp(deps, manifest);
const server = Deno.serve(
  { hostname: "127.0.0.1", port: 0, onListen: () => {} },
  (req, info) => app.fetch(req, { remoteAddr: info.remoteAddr }),
);
globalThis.addEventListener("unload", () => Deno.removeSync(dir, { recursive: true }));

const body = JSON.stringify({ model: "m1", messages: [{ role: "user", content: "hi" }], stream: true });

async function firstByte(url: string, headers: Record<string, string>) {
  const res = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...headers },
    body,
  });
  const reader = res.body!.getReader();
  await reader.read();
  await reader.cancel();
}

Deno.bench("TTFB direct to the backend", { group: "ttfb", baseline: true }, async () => {
  await firstByte(`${fake.url}/api/chat`, {});
});

Deno.bench("TTFB through the gateway (format B)", { group: "ttfb" }, async () => {
  await firstByte(`http://127.0.0.1:${server.addr.port}/v1/chat.php`, { Authorization: `Bearer ${secret}` });
});

Deno.bench("TTFB through the gateway (format A)", { group: "ttfb" }, async () => {
  await firstByte(`http://127.0.0.1:${server.addr.port}/v1/chat/completions`, {
    Authorization: `Bearer ${secret}`,
  });
});
