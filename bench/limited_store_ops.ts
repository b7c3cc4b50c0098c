/**
 * What a fully limited key (rpm and day/week/month quotas on the key and its user, set high, never reached)
 * costs the store per request: sequential whole answers through an in-process gateway, with every `Deno.Kv`
 * call counted, against a key without limits. Run: `deno run -A bench/limited_store_ops.ts [requests]`.
 */
import { createKey } from "../lib/store/keys.ts";
import { basePolicy } from "../lib/store/records.ts";
import { benchGateway, benchStore } from "./support/bench_gateway.ts";
import { addLimitedUser, limitedPolicy } from "./support/limited_key.ts";
import { counted } from "../tests/support/counted_store.ts";

const REQUESTS = Number(Deno.args[0] ?? 20_000);
const WARMUP = 500;

const counts = new Map<string, number>();
const count = (op: string) => counts.set(op, (counts.get(op) ?? 0) + 1);

const { kv: raw, catalog } = await benchStore();
await addLimitedUser(catalog);
const plain = await createKey(raw, basePolicy("m1"));
const limited = await createKey(raw, limitedPolicy());
const { url, deps } = await benchGateway(counted(raw, count));

const body = JSON.stringify({ model: "m1", messages: [{ role: "user", content: "hi" }] });
async function chat(secret: string) {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${secret}` },
    body,
  });
  if (res.status !== 200) throw new Error(`status ${res.status}: ${await res.text()}`);
  await res.arrayBuffer();
}

async function run(name: string, secret: string) {
  for (let i = 0; i < WARMUP; i++) await chat(secret);
  await deps.usage.flush();
  counts.clear();
  const start = performance.now();
  for (let i = 0; i < REQUESTS; i++) await chat(secret);
  const elapsed = performance.now() - start;
  await deps.usage.flush();
  const ops = [...counts.entries()].sort();
  const total = ops.reduce((n, [, c]) => n + c, 0);
  const detail = ops.map(([op, c]) => `${op} ${(c / REQUESTS).toFixed(4)}`).join(", ");
  console.log(
    `${name}: ${(elapsed * 1000 / REQUESTS).toFixed(0)} µs/request, ` +
      `${(total / REQUESTS).toFixed(4)} store ops/request (${detail})`,
  );
}

await run("no limits", plain.secret);
await run("fully limited", limited.secret);
await run("no limits", plain.secret);
await run("fully limited", limited.secret);
Deno.exit(0);
