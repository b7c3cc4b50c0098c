/**
 * Retention on a large ledger, while serving: a store seeded with `RETENTION_RECORDS` usage records (default
 * 2,000,000) over 120 days; the gateway serves 16 connections of whole answers in windows of 5 s, first with
 * retention off, then while its first retention pass rolls up every row older than 90 days, then after it; the
 * windows without a pass, before and after, are the reference.
 * Prints the p99 of both, the pass's length, the store's rows and size before and after, and whether every
 * total of requests and tokens per day, key, user, model, server, format and outcome is the same after.
 * Target: p99 during the roll-up ≤ 2 × the reference's.
 *
 * Usage: `deno task bench:retention`; `RETENTION_SEEDED=path` starts from a copy of a store this bench seeded
 * before (`RETENTION_KEEP_SEED=path` keeps a copy of the one it seeds), to skip the minutes of seeding.
 */
import { listUsage } from "../lib/usage/mod.ts";
import { seedUsage } from "../scripts/seed_usage.ts";
import { usageTotals } from "../tests/support/usage_totals.ts";
import { admin, BENCH_MODEL, startTaskFlags } from "./support/gateway_setup.ts";
import { chooseLoadTool, type LoadResult, runLoad } from "./support/load.ts";
import { type Child, spawnDeno } from "./support/spawn.ts";
import { gatewayTarget } from "./support/targets.ts";

const RECORDS = Number(Deno.env.get("RETENTION_RECORDS") ?? 2_000_000);
const DAYS = 120;
const KEPT_DAYS = 90;
const WINDOW_S = 5;
const REFERENCE_WINDOWS = 4;
/** A pass that takes longer than this is reported as unfinished. */
const MAX_PASS_MS = 20 * 60_000;

const log = (line: string) => console.error(`[retention] ${line}`);

async function storeBytes(path: string): Promise<number> {
  let bytes = 0;
  for (const suffix of ["", "-wal", "-shm"]) {
    try {
      bytes += (await Deno.stat(path + suffix)).size;
    } catch {
      // No such file yet.
    }
  }
  return bytes;
}

/** Requests and tokens per day, key, user, model, server, format and outcome, and the ledger's row count. */
async function ledgerFigures(path: string) {
  const kv = await Deno.openKv(path);
  try {
    const records = await listUsage(kv, { limit: Number.MAX_SAFE_INTEGER });
    const totals = usageTotals(records);
    const requests = records.reduce((n, r) => n + (r.count ?? 1), 0);
    // Records stored for the seeded requests: one per request, or one per day and group once rolled up.
    const seededStored = records.filter((r) => r.keyId?.startsWith("key_seed")).length;
    let rows = 0;
    for await (const _ of kv.list({ prefix: ["usage"] })) rows++;
    return { totals, requests, rows, seededStored };
  } finally {
    kv.close();
  }
}

const sameTotals = (a: Map<string, string>, b: Map<string, string>) =>
  a.size === b.size && [...a].every(([id, t]) => b.get(id) === t);

const p99Ms = (r: LoadResult) => r.p99Us / 1000;
const median = (xs: number[]) => xs.toSorted((a, b) => a - b)[Math.floor(xs.length / 2)];

const dir = await Deno.makeTempDir({ prefix: "retention-bench-" });
const store = `${dir}/store.kv`;
const children: Child[] = [];
try {
  const tool = await chooseLoadTool(log);
  let started = performance.now();
  const seedCopy = Deno.env.get("RETENTION_SEEDED");
  if (seedCopy) {
    await Deno.copyFile(seedCopy, store);
    log(`started from a copy of ${seedCopy}`);
  } else {
    const seed = await Deno.openKv(store);
    const rows = await seedUsage(seed, { records: RECORDS, days: DAYS, keys: 50 });
    seed.close();
    log(
      `seeded ${RECORDS} records in ${rows} rows in ${((performance.now() - started) / 1000).toFixed(0)} s`,
    );
    const keep = Deno.env.get("RETENTION_KEEP_SEED");
    if (keep) await Deno.copyFile(store, keep);
  }
  const env = { GATEWAY_KV: store };
  const backend = await spawnDeno({ name: "backend", args: ["run", "--allow-net", "bench/fast_backend.ts"] });
  children.push(backend);
  await admin(env, "server", "add", "--name", "bench", "--url", backend.url, "--model", BENCH_MODEL);
  const secret = (await admin(env, "key", "create", "--model", BENCH_MODEL, "--name", "load")).key;
  const before = await ledgerFigures(store);
  const bytesBefore = await storeBytes(store);

  const serve = async (name: string, extra: Record<string, string>) => {
    const child = await spawnDeno({
      name,
      args: [...await startTaskFlags(), "main.ts"],
      env: { ...env, PORT: "0", HOST: "127.0.0.1", ...extra },
    });
    children.push(child);
    return child;
  };
  const window = (child: Child) =>
    runLoad(tool, { ...gatewayTarget(child.url, secret).whole, connections: 16, seconds: WINDOW_S });

  const reference = await serve("gateway, retention off", { GATEWAY_USAGE_RETENTION_DAYS: "0" });
  await window(reference);
  const quiet: number[] = [];
  for (let i = 0; i < REFERENCE_WINDOWS; i++) quiet.push(p99Ms(await window(reference)));
  await reference.stop();

  const rolling = await serve("gateway, retention on", {
    GATEWAY_USAGE_RETENTION_DAYS: String(KEPT_DAYS),
    // The first pass comes 6 s after the start: a warm-up window runs first, as for the reference.
    GATEWAY_USAGE_RETENTION_EVERY_MS: "60000",
  });
  await window(rolling);
  started = performance.now();
  const during: number[] = [];
  let passLine: string | undefined;
  while (!(passLine = rolling.tail().split("\n").find((l) => l.includes("rolled up into days")))) {
    if (performance.now() - started > MAX_PASS_MS) break;
    during.push(p99Ms(await window(rolling)));
  }
  // The last window ran partly after the pass ended: it is not counted as during the roll-up.
  if (during.length > 1) during.pop();
  // The same process once its pass is done is a reference too: measured minutes later than the first, it
  // keeps a busy moment of the machine before the pass from setting the bar alone.
  for (let i = 0; passLine && i < REFERENCE_WINDOWS; i++) quiet.push(p99Ms(await window(rolling)));
  await rolling.stop();

  const after = await ledgerFigures(store);
  const bytesAfter = await storeBytes(store);
  const reference99 = median(quiet);
  const worst = Math.max(...during);
  const lines = [
    `Retention on ${
      RECORDS.toLocaleString("en")
    } records over ${DAYS} days, rows older than ${KEPT_DAYS} days`,
    `p99, whole answers at 16 connections, windows of ${WINDOW_S} s:`,
    `  no pass running (a gateway with retention off; then the other after its pass): ${
      quiet.map((x) => x.toFixed(1)).join(", ")
    } ms (median ${reference99.toFixed(1)})`,
    `  during the roll-up: ${during.map((x) => x.toFixed(1)).join(", ")} ms (worst ${worst.toFixed(1)})`,
    `  worst ÷ reference: ${(worst / reference99).toFixed(2)} × (target ≤ 2: ${
      worst <= 2 * reference99 ? "met" : "missed"
    })`,
    `the pass: ${passLine?.trim() ?? `not finished within ${MAX_PASS_MS / 60_000} min`}`,
    `ledger rows: ${before.rows.toLocaleString("en")} → ${after.rows.toLocaleString("en")}`,
    `store file: ${(bytesBefore / 2 ** 20).toFixed(1)} MB → ${(bytesAfter / 2 ** 20).toFixed(1)} MB ` +
    "(SQLite reuses the freed pages; the file shrinks only on a VACUUM)",
    `records stored for the seeded requests: ${before.seededStored.toLocaleString("en")} → ${
      after.seededStored.toLocaleString("en")
    }`,
    `requests in the ledger: ${before.requests.toLocaleString("en")} → ${
      after.requests.toLocaleString("en")
    } ` +
    "(the windows' requests are added)",
    `totals per day, key, user, model, server, format and outcome of the seeded records: ${
      sameTotals(seeded(before.totals), seeded(after.totals)) ? "identical" : "DIFFERENT"
    }`,
  ];
  console.log(lines.join("\n"));
} finally {
  for (const child of children.reverse()) await child.stop();
  await Deno.remove(dir, { recursive: true });
}

/** The seeded records' totals: the bench's own requests (key "load") come on top after. */
function seeded(totals: Map<string, string>): Map<string, string> {
  return new Map([...totals].filter(([id]) => id.split(",")[1]?.startsWith("key_seed")));
}
