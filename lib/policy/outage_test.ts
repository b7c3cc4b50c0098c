import assert from "node:assert/strict";
import { StoreUnavailable } from "../errors.ts";
import type { ChatRequest } from "../chat/types.ts";
import { StoreLink, StoreUnreachable } from "../store/link.ts";
import { basePolicy, type KeyRecord } from "../store/records.ts";
import { LiveTotals } from "../usage/live_totals.ts";
import { UsageLedger } from "../usage/ledger.ts";
import { Policy } from "./mod.ts";

const NOW = Date.parse("2026-11-22T12:00:05Z");

function key(id: string, policy: Partial<KeyRecord> = {}): KeyRecord {
  const at = new Date(NOW).toISOString();
  return { ...basePolicy("m1"), id, digest: id, hint: "gwk_", createdAt: at, updatedAt: at, ...policy };
}

const request = (): ChatRequest => ({
  model: "m1",
  messages: [{ role: "user", content: "hi" }],
  stream: false,
  includeUsage: false,
  options: {},
});

/** A network store that answers nothing, as in an outage: every read and commit waits forever. */
function unreachable(kv: Deno.Kv): Deno.Kv {
  const never = () => new Promise<never>(() => {});
  return new Proxy(kv, {
    get(target, prop) {
      if (prop === "get" || prop === "getMany") return never;
      if (prop === "atomic") {
        return () => {
          const op = target.atomic();
          op.commit = never;
          return op;
        };
      }
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

async function withPolicy(
  options: { mode: "closed" | "allow"; backlog?: number },
  fn: (policy: Policy) => Promise<void>,
) {
  using kv = await Deno.openKv(":memory:");
  const down = unreachable(kv);
  const link = new StoreLink({ remote: true, timeoutMs: 20, onChange: () => {} });
  const policy = new Policy({
    kv: down,
    trustProxy: [],
    totals: new LiveTotals(down),
    users: () => new Map(),
    ledger: new UsageLedger(kv),
    defaultOutput: 100,
    link,
    outage: { mode: options.mode, rpm: 2 },
    backlog: { full: (options.backlog ?? 0) >= 10, backlog: options.backlog ?? 0 },
  });
  try {
    await fn(policy);
  } finally {
    await policy.close();
  }
}

const caller = { headers: new Headers() };

async function refusal(work: () => unknown): Promise<StoreUnavailable> {
  try {
    await work();
  } catch (error) {
    assert.ok(error instanceof StoreUnavailable, String(error));
    return error;
  }
  throw new Error("not refused");
}

Deno.test("closed: a rate-limit claim or a quota decision the store does not answer in time is a 503 store_unavailable", async () => {
  await withPolicy({ mode: "closed" }, async (policy) => {
    const rated = await refusal(() => policy.admit(key("key_r", { rpm: 10 }), caller, NOW));
    assert.ok(rated.cause instanceof StoreUnreachable);
    assert.deepEqual([rated.status, rated.code, rated.headers()], [503, "store_unavailable", {
      "Retry-After": "1",
    }]);
    // The store is now known to be down: the next refusal comes at once, without starting anything.
    const quota = key("key_q", { dailyTokens: 1_000_000 });
    assert.deepEqual(policy.admit(quota, caller, NOW), {});
    const reserved = await refusal(() => policy.reserve(quota, request(), NOW));
    assert.ok(reserved.cause instanceof StoreUnreachable);
    assert.deepEqual(policy.admit(key("key_free"), caller, NOW), {}, "a key without limits needs no store");
    assert.equal(policy.reserve(key("key_free"), request(), NOW), undefined);
  });
});

Deno.test("allow: past each limit the store cannot check, up to the bound per key and minute, then 503", async () => {
  await withPolicy({ mode: "allow" }, async (policy) => {
    const rated = key("key_r", { rpm: 10 });
    for (let i = 0; i < 2; i++) assert.deepEqual(await policy.admit(rated, caller, NOW), {});
    await refusal(() => policy.admit(rated, caller, NOW));
    const small = key("key_s", { rpm: 1 });
    assert.deepEqual(await policy.admit(small, caller, NOW), {});
    await refusal(() => policy.admit(small, caller, NOW + 1));
    assert.deepEqual(await policy.admit(small, caller, NOW + 60_000), {}, "a new minute, a new allowance");

    const quota = key("key_q", { dailyTokens: 1_000_000 });
    for (let i = 0; i < 2; i++) {
      const asked = request();
      const hold = await policy.reserve(quota, asked, NOW);
      assert.equal(hold?.output, 100, "capped to the default output, as with the store");
      assert.equal(asked.options.numPredict, 100);
      hold?.settle(50);
    }
    await refusal(() => policy.reserve(quota, request(), NOW));
  });
});

Deno.test("more usage records waiting for the store than the ledger keeps: every key's requests are refused", async () => {
  await withPolicy({ mode: "allow", backlog: 10 }, async (policy) => {
    const refused = await refusal(() => policy.admit(key("key_free"), caller, NOW));
    assert.match(refused.message, /until its store takes the 10 records waiting for it/);
  });
});
