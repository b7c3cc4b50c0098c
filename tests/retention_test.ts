/**
 * Retention as a gateway runs it: in the background, while it serves, rows past the kept age are rolled up
 * into days, and every total of requests and tokens read back from the ledger stays what it was.
 */
import assert from "node:assert/strict";
import { encodeTime } from "ulid";
import { Scenario, USER_HELLO } from "./harness.ts";
import { eventually } from "./support/wait_for.ts";
import { listUsage } from "../lib/usage/mod.ts";
import { isRollupId } from "../lib/usage/retention.ts";
import { seedUsage } from "../scripts/seed_usage.ts";
import { usageTotals } from "./support/usage_totals.ts";

const DAY_MS = 86_400_000;
const SEED = { records: 4_000, days: 60, keys: 4, now: Date.now() };

Deno.test("a serving gateway rolls up rows past the kept age in the background, every total kept", async () => {
  using reference = await Deno.openKv(":memory:");
  await seedUsage(reference, SEED);
  const expected = usageTotals(await listUsage(reference, { limit: 1_000_000 }));

  await using s = await Scenario.start(undefined, {
    config: { usageRetentionDays: 30, usageRetentionEveryMs: 1_000 },
  });
  await seedUsage(s.gw.kv, SEED);
  const secret = await s.gw.key();
  const cutoff = SEED.now - 32 * DAY_MS;
  await eventually("the old rows rolled up", async () => {
    // Requests go on meanwhile, each answered.
    assert.equal((await s.gw.post("/v1/chat/completions", secret, { messages: USER_HELLO })).status, 200);
    const old = await Array.fromAsync(
      s.gw.kv.list({ prefix: ["usage"], end: ["usage", encodeTime(cutoff)] }),
    );
    return old.length > 0 && old.every((row) => isRollupId(String(row.key[1])));
  });
  await s.gw.ledger.flush();
  const seeded = (await listUsage(s.gw.kv, { limit: 1_000_000 })).filter((r) =>
    r.keyId?.startsWith("key_seed")
  );
  assert.deepEqual(usageTotals(seeded), expected);
});
