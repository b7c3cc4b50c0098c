import assert from "node:assert/strict";
import { openStore } from "../store/kv.ts";
import { rateCounterKey, RateLimiter } from "./rate_limit.ts";

const T0 = Date.UTC(2026, 10, 22, 12, 0, 5);

async function burst(limiters: RateLimiter[], n: number, limit: number, now = T0) {
  const decisions = await Promise.all(
    Array.from({ length: n }, (_, i) => limiters[i % limiters.length].admit("key_a", limit, now)),
  );
  return decisions.filter((d) => d.admitted).length;
}

Deno.test("200 requests at once against a limit of 10: exactly 10 admitted", async () => {
  using kv = await Deno.openKv(":memory:");
  assert.equal(await burst([new RateLimiter(kv)], 200, 10), 10);
  const counter = await kv.get<Deno.KvU64>(rateCounterKey("key_a", Math.floor(T0 / 60_000)));
  assert.equal(counter.value?.value, 10n, "every claimed slot was spent");
});

Deno.test("two processes on one store file share the limit exactly", async () => {
  const dir = await Deno.makeTempDir();
  try {
    // Two handles on one SQLite file contend like two processes do, "database is locked" included.
    const a = await openStore(`${dir}/s.kv`);
    const b = await openStore(`${dir}/s.kv`);
    try {
      for (const limit of [1, 10, 37]) {
        const minute = T0 + limit * 60_000;
        assert.equal(await burst([new RateLimiter(a), new RateLimiter(b)], 200, limit, minute), limit);
      }
    } finally {
      a.close();
      b.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a new minute brings a new budget; headers describe the window", async () => {
  using kv = await Deno.openKv(":memory:");
  const limiter = new RateLimiter(kv);
  const first = await limiter.admit("key_a", 2, T0);
  assert.deepEqual(first, { admitted: true, limit: 2, remaining: 1, resetAt: Date.UTC(2026, 10, 22, 12, 1) });
  assert.equal((await limiter.admit("key_a", 2, T0 + 1000)).remaining, 0);
  const refused = await limiter.admit("key_a", 2, T0 + 54_999);
  assert.equal(refused.admitted, false);
  assert.equal((await limiter.admit("key_a", 2, T0 + 55_000)).admitted, true, "12:01:00 starts a new minute");
  assert.equal((await limiter.admit("key_b", 2, T0)).admitted, true, "keys do not share a budget");
});

Deno.test("large limits claim headroom, so most admissions need no commit", async () => {
  using kv = await Deno.openKv(":memory:");
  const limiter = new RateLimiter(kv);
  let commits = 0;
  const atomic = kv.atomic.bind(kv);
  kv.atomic = () => {
    commits++;
    return atomic();
  };
  for (let i = 0; i < 1000; i++) assert.ok((await limiter.admit("key_a", 100_000, T0)).admitted);
  assert.ok(commits <= 2, `${commits} commits for 1000 admissions`);
  const counter = await kv.get<Deno.KvU64>(rateCounterKey("key_a", Math.floor(T0 / 60_000)));
  assert.ok(counter.value!.value <= 1000n + 1000n, "at most 1% of the limit is held ahead");
});

Deno.test("a lowered limit binds at once; headroom claimed under the old one is dropped", async () => {
  using kv = await Deno.openKv(":memory:");
  const limiter = new RateLimiter(kv);
  for (let i = 0; i < 5; i++) await limiter.admit("key_a", 10_000, T0);
  assert.equal((await limiter.admit("key_a", 5, T0)).admitted, false, "5 already admitted this minute");
  assert.equal((await limiter.admit("key_a", 10_000, T0)).admitted, true);
});
