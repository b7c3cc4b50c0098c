/** The gateway: load config → open store → build the app from the route manifest → serve. */
import { loadConfig } from "./lib/config.ts";
import { openStore } from "./lib/store/kv.ts";
import { closeDeps, createDeps } from "./lib/deps.ts";
import { buildApp } from "./lib/http/app.ts";
import { serve } from "./lib/http/serve.ts";
import { serveMetrics } from "./lib/http/metrics_server.ts";
import { manifest } from "./routes.gen.ts";

const config = loadConfig();
const kv = await openStore(config.kvPath);
const deps = await createDeps(config, kv);
const metrics = serveMetrics(deps);
const serving = serve(buildApp(deps, manifest), config, async () => {
  metrics?.close();
  await closeDeps(deps);
  kv.close();
});
if (serving.stats) deps.metrics?.watchConnections(serving.stats);
