/**
 * The in-process gateway the benches share: a store file in a temporary folder (removed at exit), one fast
 * fake Ollama registered as server "b" carrying m1, and the full app served on 127.0.0.1.
 */
import { defaultConfig } from "../../lib/config.ts";
import { createDeps } from "../../lib/deps.ts";
import { newClient } from "../../lib/http/client.ts";
import { signalCut } from "../../lib/runtime/request_cut.ts";
import { buildApp } from "../../lib/server/app.ts";
import { Catalog } from "../../lib/store/catalog.ts";
import { openStore } from "../../lib/store/kv.ts";
import { manifest } from "../../routes.gen.ts";
import { FakeOllama } from "../../tests/fakes/fake_ollama.ts";

/** The store and the fake backend, before the gateway starts, so a bench can add keys and users first. */
export async function benchStore() {
  const dir = await Deno.makeTempDir();
  globalThis.addEventListener("unload", () => Deno.removeSync(dir, { recursive: true }));
  const kv = await openStore(`${dir}/bench.kv`);
  const fake = FakeOllama.start("bench");
  const catalog = new Catalog(kv);
  await catalog.servers.add({
    name: "b",
    url: fake.url,
    kind: "ollama",
    models: [{ tag: "m1" }],
    weight: 1,
    enabled: true,
  });
  return { kv, fake, catalog };
}

/** Starts the gateway on `kv`; returns its services and base URL. */
export async function benchGateway(kv: Deno.Kv) {
  const deps = await createDeps(defaultConfig(), kv);
  const app = buildApp(deps, manifest);
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    (req, info) => app.fetch(req, newClient(signalCut(req.signal), info.remoteAddr.hostname)),
  );
  return { deps, url: `http://127.0.0.1:${server.addr.port}` };
}
