/**
 * Does the hot path stay flat as the store grows? Key lookup (digest + one indexed read, the path a key not yet
 * cached takes) and admission (a key with an IP list, a rate limit and day/week/month quotas on it and its
 * user) on a store file with 10 keys and one with 100,000. Rounds alternate the two stores so machine noise
 * falls on both alike; each figure is a median over
 * short back-to-back pairs of runs (mean time per operation).
 * Run by bench/run.ts in its own process: `deno run -A bench/store_scale.ts [rounds]`; prints one JSON object.
 */
import { defaultConfig } from "../lib/config.ts";
import { meteredServices } from "../lib/deps.ts";
import { Catalog } from "../lib/store/catalog.ts";
import { createKey, findKeyByDigest } from "../lib/store/keys.ts";
import { digestSecret } from "../lib/store/key_secret.ts";
import { openStore } from "../lib/store/kv.ts";
import type { KeyRecord } from "../lib/store/records.ts";
import { StoreView } from "../lib/store/view.ts";
import { fillKeys } from "../tests/support/fill_keys.ts";
import { median } from "./support/streaming.ts";
import { addLimitedUser, limitedPolicy } from "./support/limited_key.ts";

const PAIRS_PER_ROUND = 4;
const LOOKUPS_PER_PAIR = 500;
/** A multiple of the rate limiter's claim size (1,000 slots at this limit), so every run makes as many commits. */
const ADMISSIONS_PER_PAIR = 4_000;
const rounds = Math.max(1, Number(Deno.args[0] ?? 5));
interface Pair {
  small: number;
  large: number;
}

const caller = { headers: new Headers({ Origin: "https://app.example.com" }), peer: "127.0.0.1" };

async function storeWith(dir: string, keys: number) {
  const kv = await openStore(`${dir}/store-${keys}.kv`);
  await fillKeys(kv, keys);
  await addLimitedUser(new Catalog(kv));
  const { secret } = await createKey(kv, limitedPolicy({ allowIps: ["127.0.0.0/8"] }));
  const view = await StoreView.open(kv, 60_000);
  const { policy, usage } = meteredServices(kv, defaultConfig(), view, (e) => console.error(e));
  const key = (await findKeyByDigest(kv, await digestSecret(secret))) as KeyRecord;
  return {
    keys,
    lookup: async () => {
      if (!(await findKeyByDigest(kv, await digestSecret(secret)))) throw new Error("key missing");
    },
    admit: () => policy.admit(key, caller, Date.now()),
    close: async () => {
      view.close();
      await policy.close();
      await usage.close();
      kv.close();
    },
  };
}

/** Mean µs per call over `n` sequential calls. */
async function timeEach(n: number, op: () => unknown): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < n; i++) await op();
  return (performance.now() - start) * 1000 / n;
}

const dir = await Deno.makeTempDir({ prefix: "gateway-bench-keys-" });
try {
  const small = await storeWith(dir, 10);
  const large = await storeWith(dir, 100_000);
  const pairs = { lookup: [] as Pair[], admission: [] as Pair[] };
  try {
    for (const s of [small, large]) {
      await timeEach(LOOKUPS_PER_PAIR, s.lookup);
      await timeEach(ADMISSIONS_PER_PAIR, s.admit);
    }
    for (let i = 0; i < rounds * PAIRS_PER_ROUND; i++) {
      // Alternate which store goes first, so neither always runs right after the other's work.
      const [a, b] = i % 2 ? [large, small] : [small, large];
      const lookups = [
        await timeEach(LOOKUPS_PER_PAIR, a.lookup),
        await timeEach(LOOKUPS_PER_PAIR, b.lookup),
      ];
      const admits = [
        await timeEach(ADMISSIONS_PER_PAIR, a.admit),
        await timeEach(ADMISSIONS_PER_PAIR, b.admit),
      ];
      const paired = (
        t: number[],
      ) => (a === small ? { small: t[0], large: t[1] } : { small: t[1], large: t[0] });
      pairs.lookup.push(paired(lookups));
      pairs.admission.push(paired(admits));
    }
  } finally {
    await small.close();
    await large.close();
  }
  // Neighbouring runs share the machine's mood, so the ratio is taken per pair, then the median.
  const figure = (p: Pair[]) => ({
    smallUs: median(p.map((x) => x.small)),
    largeUs: median(p.map((x) => x.large)),
    ratio: median(p.map((x) => x.large / x.small)),
  });
  console.log(JSON.stringify({ rounds, lookup: figure(pairs.lookup), admission: figure(pairs.admission) }));
} finally {
  await Deno.remove(dir, { recursive: true });
}
