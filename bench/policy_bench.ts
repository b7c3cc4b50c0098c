/**
 * What the policy stage costs. Admission alone (`Policy.admit`) for a key without limits, for a key with an
 * IP list, a domain list, a rate limit and day/week/month quotas on the key and its user (set high, never
 * reached), and for the naive design the leases replace: a read and a check-and-set commit of the rate
 * counter plus a read of the quota counters on every request. Then whole requests through the gateway with
 * the policy off and on. In-process on a store file, so the figures are relative to each other.
 */
import { createKey } from "../lib/store/keys.ts";
import { basePolicy } from "../lib/store/records.ts";
import { tokenCounterKey } from "../lib/usage/mod.ts";
import { benchGateway, benchStore } from "./support/bench_gateway.ts";
import { addLimitedUser, limitedPolicy } from "./support/limited_key.ts";

const { kv, catalog } = await benchStore();
await addLimitedUser(catalog);
const limited = limitedPolicy({ allowIps: ["127.0.0.0/8", "10.0.0.0/8"], allowDomains: ["*.example.com"] });
const off = await createKey(kv, basePolicy("m1"));
const on = await createKey(kv, limited);
const { deps, url } = await benchGateway(kv);

const offKey = (await deps.view.findKey(off.record.digest))!;
const onKey = (await deps.view.findKey(on.record.digest))!;
const caller = { headers: new Headers({ Origin: "https://app.example.com" }), peer: "127.0.0.1" };

Deno.bench("admission, no limits set", { group: "admit", baseline: true }, async () => {
  await deps.policy.admit(offKey, caller, Date.now());
});

Deno.bench("admission, IP + domain + rpm + 6 quotas (leases, live totals)", { group: "admit" }, async () => {
  await deps.policy.admit(onKey, caller, Date.now());
});

Deno.bench(
  "admission, naive: rate read + check-and-set, quota read, per request",
  { group: "admit" },
  async () => {
    const minute = Math.floor(Date.now() / 60_000);
    const rate = await kv.get<Deno.KvU64>(["naive_rate", onKey.id, minute]);
    const next = (rate.value?.value ?? 0n) + 1n;
    await kv.atomic().check(rate).set(rate.key, new Deno.KvU64(next), { expireIn: 120_000 }).commit();
    await kv.getMany(["d:x", "w:x", "m:x"].flatMap((p) => [
      tokenCounterKey("key", onKey.id, p),
      tokenCounterKey("user", "ana", p),
    ]));
  },
);

const body = JSON.stringify({ messages: [{ role: "user", content: "hi" }] });
async function chat(secret: string) {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      Authorization: `Bearer ${secret}`,
      Origin: "https://app.example.com",
    },
    body,
  });
  if (res.status !== 200) throw new Error(`status ${res.status}`);
  await res.arrayBuffer();
}

Deno.bench("request through the gateway, policy off", { group: "request", baseline: true }, async () => {
  await chat(off.secret);
});

Deno.bench(
  "request through the gateway, policy on (limits set, not reached)",
  { group: "request" },
  async () => {
    await chat(on.secret);
  },
);
