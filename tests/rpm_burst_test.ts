/**
 * The per-minute rate limit under a burst, wherever the gateway runs as one or as several processes on one
 * store: 200 requests at once at rpm 10, over both formats, admit exactly 10; the rest get 429 in their
 * format with the rate-limit headers, never reach a backend, and every request is recorded. One table, a row
 * per way of running: what differs between them is only how many processes share the limit.
 */
import assert from "node:assert/strict";
import { listUsage } from "../lib/usage/mod.ts";
import { Scenario, USER_HELLO } from "./harness.ts";
import { FakeOllama } from "./fakes/fake_ollama.ts";
import { admin, type GatewayProcess, startGateway } from "./support/processes.ts";
import { clearOfMinuteEnd } from "./support/wait_for.ts";

const PATHS = ["/v1/chat/completions", "/api/v1/chat.php"] as const;
/** How a refusal's error body reads in each path's format. */
const ERROR_TYPE = { "/v1/chat/completions": "rate_limit_error", "/api/v1/chat.php": "proxy_error" };
const LIMIT = 10;
const REQUESTS = 200;

interface Recorded {
  status: string;
  errorCode?: string;
  count?: number;
}

interface Running extends AsyncDisposable {
  /** Where requests go, in turn. */
  urls: string[];
  key: string;
  fake: FakeOllama;
  /** Whether one limiter decides every request, so the admitted answers' `remaining` counts down exactly. */
  oneProcess: boolean;
  /** Stops the gateways as SIGTERM does (each flushes its ledger) and returns the key's records. */
  finish(): Promise<Recorded[]>;
}

/** Gateway processes on one store file with one fake backend; `args` per process (undefined: `task start`). */
async function processes(runs: { args?: string[]; env?: Record<string, string> }[]): Promise<Running> {
  const dir = await Deno.makeTempDir();
  const fake = FakeOllama.start("shared");
  const env = { GATEWAY_KV: `${dir}/store.kv` };
  const gateways: GatewayProcess[] = [];
  const stopAll = async () => (await Promise.all(gateways.map((g) => g.stop()))).map((s) => s.code);
  try {
    await admin(env, "server", "add", "--name", "gpu1", "--url", fake.url, "--model", "m1");
    const { key, id } = await admin(env, "key", "create", "--model", "m1", "--rpm", String(LIMIT));
    for (const run of runs) gateways.push(await startGateway({ ...env, ...run.env }, run.args));
    return {
      urls: gateways.map((g) => g.url),
      key,
      fake,
      oneProcess: false,
      finish: async () => {
        assert.deepEqual(await stopAll(), gateways.map(() => 0), "clean exits");
        return (await admin(env, "usage", "--key", id, "--limit", "1000")).records;
      },
      async [Symbol.asyncDispose]() {
        await stopAll();
        await fake.close();
        await Deno.remove(dir, { recursive: true });
      },
    };
  } catch (error) {
    await stopAll();
    await fake.close();
    await Deno.remove(dir, { recursive: true });
    throw error;
  }
}

const ROWS: { name: string; start(): Promise<Running> }[] = [
  {
    name: "one gateway",
    start: async () => {
      const s = await Scenario.start();
      return {
        urls: [s.gw.url],
        key: await s.gw.key({ rpm: LIMIT }),
        fake: s.fake(),
        oneProcess: true,
        finish: async () => {
          // As at a stop: the minute's folded refusals are written too.
          await s.gw.ledger.close();
          return await listUsage(s.gw.kv, { limit: 1000 });
        },
        [Symbol.asyncDispose]: () => s[Symbol.asyncDispose](),
      };
    },
  },
  { name: "two gateway processes on one store", start: () => processes([{}, {}]) },
  {
    name: "start:parallel with two workers",
    start: () =>
      processes([{
        args: ["run", "--allow-net", "--allow-env", "--allow-read", "--allow-write", "parallel.ts"],
        env: { GATEWAY_WORKERS: "2" },
      }]),
  },
];

for (const row of ROWS) {
  Deno.test(`rpm ${LIMIT}, ${REQUESTS} requests at once, ${row.name}: exactly ${LIMIT} admitted, the rest 429 in their format, each recorded`, async () => {
    await using run = await row.start();
    await clearOfMinuteEnd(10_000);
    const sent = await Promise.all(Array.from({ length: REQUESTS }, async (_, i) => {
      // Each process gets both formats.
      const path = PATHS[i % 2];
      const url = run.urls[Math.floor(i / 2) % run.urls.length];
      const res = await fetch(`${url}${path}`, {
        method: "POST",
        headers: { "Content-Type": "application/json", Authorization: `Bearer ${run.key}` },
        body: JSON.stringify({ messages: USER_HELLO }),
      });
      return { path, res, body: await res.json() };
    }));
    const ok = sent.filter((s) => s.res.status === 200);
    const limited = sent.filter((s) => s.res.status === 429);
    assert.equal(ok.length, LIMIT);
    assert.equal(limited.length, REQUESTS - LIMIT);
    assert.equal(run.fake.chats.length, LIMIT, "refused requests never reach a backend");

    const now = Date.now();
    for (const { path, res, body } of limited) {
      const retryAfter = Number(res.headers.get("retry-after"));
      assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
      assert.equal(res.headers.get("x-ratelimit-limit"), String(LIMIT));
      assert.equal(res.headers.get("x-ratelimit-remaining"), "0");
      const reset = Number(res.headers.get("x-ratelimit-reset"));
      assert.equal(reset % 60, 0, "the minute's end, in Unix seconds");
      assert.ok(reset * 1000 > now && reset * 1000 <= now + 61_000, `reset ${reset}`);
      assert.equal(body.error.code, "rate_limited", path);
      assert.match(body.error.message, new RegExp(`${LIMIT} requests per minute`));
      assert.equal(body.error.type, ERROR_TYPE[path], path);
    }
    const remaining = ok.map((s) => Number(s.res.headers.get("x-ratelimit-remaining"))).sort((a, b) => a - b);
    if (run.oneProcess) {
      assert.deepEqual(remaining, Array.from({ length: LIMIT }, (_, i) => i), "admitted answers count down");
    } else {
      // Each process tells the counter as it last saw it.
      assert.ok(remaining.every((r) => r >= 0 && r < LIMIT), String(remaining));
    }

    const records = await run.finish();
    // Refusals past the first few of a key's minute are folded into counted rows.
    const counted = (rows: Recorded[] = []) => rows.reduce((n, r) => n + (r.count ?? 1), 0);
    assert.equal(counted(records), REQUESTS, "every request counted");
    const byStatus = Object.groupBy(records, (r) => r.status);
    assert.equal(byStatus.ok?.length, LIMIT);
    assert.equal(counted(byStatus.rejected), REQUESTS - LIMIT);
    // Per process: five rows of their own, then one per format (two here).
    assert.ok(byStatus.rejected!.length <= 2 * (5 + 2), `${byStatus.rejected!.length} refusal rows`);
    assert.ok(byStatus.rejected!.every((r) => r.errorCode === "rate_limited"));
  });
}
