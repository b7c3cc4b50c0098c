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

/**
 * One store handle per process: two handles on one SQLite file contend as two processes do, "database is
 * locked" included.
 */
const BURSTS = [
  { processes: 1, store: "memory", limits: [10] },
  { processes: 2, store: "file", limits: [1, 10, 37] },
] as const;

for (const { processes, store, limits } of BURSTS) {
  Deno.test(`200 requests at once over ${processes} process(es) on a ${store} store: exactly the limit admitted (${limits.join(", ")})`, async () => {
    const dir = await Deno.makeTempDir();
    const handles = store === "memory"
      ? [await Deno.openKv(":memory:")]
      : await Promise.all(Array.from({ length: processes }, () => openStore(`${dir}/s.kv`)));
    try {
      for (const limit of limits) {
        const minute = T0 + limit * 60_000;
        assert.equal(await burst(handles.map((kv) => new RateLimiter(kv)), 200, limit, minute), limit);
        // Every slot was spent by those admitted: a process that comes later finds none left.
        const late = await new RateLimiter(handles[0]).admit("key_a", limit, minute);
        assert.equal(late.admitted, false, `limit ${limit}`);
      }
    } finally {
      for (const kv of handles) kv.close();
      await Deno.remove(dir, { recursive: true });
    }
  });
}

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

Deno.test("a slot given back by a later refusal is the key's next request's, within its minute and limit only", async () => {
  using kv = await Deno.openKv(":memory:");
  const limiter = new RateLimiter(kv);
  for (let i = 0; i < 3; i++) assert.ok((await limiter.admit("key_a", 3, T0)).admitted);
  assert.equal((await limiter.admit("key_a", 3, T0)).admitted, false);
  limiter.giveBack("key_a", 3, T0);
  const again = await limiter.admit("key_a", 3, T0 + 1000);
  assert.deepEqual([again.admitted, again.remaining], [true, 0]);
  assert.equal((await limiter.admit("key_a", 3, T0)).admitted, false, "one slot given back, one taken");
  const counter = await kv.get<Deno.KvU64>(rateCounterKey("key_a", Math.floor(T0 / 60_000)));
  assert.equal(counter.value!.value, 3n, "never more than the limit claimed");

  limiter.giveBack("key_a", 2, T0);
  assert.equal((await limiter.admit("key_a", 3, T0)).admitted, false, "spent under another limit");
  assert.ok((await limiter.admit("key_a", 3, T0 + 60_000)).admitted);
  limiter.giveBack("key_a", 3, T0);
  for (let i = 0; i < 2; i++) assert.ok((await limiter.admit("key_a", 3, T0 + 60_000)).admitted);
  assert.equal((await limiter.admit("key_a", 3, T0 + 60_000)).admitted, false, "spent in a minute now over");
});

/** Counts the reads and commits a limiter makes, by wrapping the real store. */
function counted(kv: Deno.Kv) {
  const counts = { reads: 0, commits: 0 };
  const get = kv.get.bind(kv);
  const atomic = kv.atomic.bind(kv);
  kv.get = ((key: Deno.KvKey) => (counts.reads++, get(key))) as typeof kv.get;
  kv.atomic = () => {
    const op = atomic();
    const commit = op.commit.bind(op);
    op.commit = () => (counts.commits++, commit());
    return op;
  };
  return counts;
}

Deno.test("a claim is one commit without a read while this process wrote the counter last; a claim from elsewhere makes the next ones read first", async () => {
  using kv = await Deno.openKv(":memory:");
  const counts = counted(kv);
  const limiter = new RateLimiter(kv);
  for (let i = 0; i < 5; i++) assert.ok((await limiter.admit("key_a", 50, T0)).admitted);
  assert.deepEqual(counts, { reads: 0, commits: 5 }, "one round trip per claim");

  // Another process claims a slot of the same minute.
  assert.ok((await new RateLimiter(kv).admit("key_a", 50, T0)).admitted);
  counts.reads = counts.commits = 0;
  const after = await limiter.admit("key_a", 50, T0);
  assert.deepEqual([after.admitted, after.remaining], [true, 43]);
  assert.deepEqual(counts, { reads: 1, commits: 2 }, "the guess failed, then read and claimed");
  counts.reads = counts.commits = 0;
  assert.ok((await limiter.admit("key_a", 50, T0)).admitted);
  assert.deepEqual(counts, { reads: 1, commits: 1 }, "a shared counter is read before a claim");
  const counter = await kv.get<Deno.KvU64>(rateCounterKey("key_a", Math.floor(T0 / 60_000)));
  assert.equal(counter.value!.value, 8n);
});
