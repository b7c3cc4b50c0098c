import assert from "node:assert/strict";
import { defaultConfig } from "../config.ts";
import { basePolicy, type KeyRecord, type ServerRecord } from "../store/records.ts";
import { warmUp } from "./mod.ts";
import { HIGH, storeShapes, warmUpPolicies, warmUpServer } from "./record_shapes.ts";

const STAMP = "2026-01-01T00:00:00.000Z";

/** A key as a store may hold it after an admin set nearly everything, in the order the admin wrote it. */
const limited: KeyRecord = {
  model: "m1",
  allowIps: ["10.0.0.0/8"],
  allowDomains: ["app.example"],
  tools: true,
  vision: false,
  thinking: true,
  forceJson: false,
  name: "team",
  user: "ana",
  cluster: "gpus",
  rpm: 3,
  weeklyTokens: 10,
  maxConcurrent: 1,
  expiresAt: "2026-01-02T00:00:00.000Z",
  systemPrompt: "Be brief.",
  maxPredict: 64,
  id: "key_1",
  digest: "d".repeat(64),
  hint: "gwk_abcd…",
  createdAt: STAMP,
  updatedAt: STAMP,
  previous: { digest: "e".repeat(64), hint: "gwk_efgh…", validUntil: STAMP },
  rotatedAt: STAMP,
};

const RECORD_ONLY = ["id", "digest", "hint", "createdAt", "updatedAt", "revokedAt", "previous", "rotatedAt"];

Deno.test("a warm-up key has a store key's fields in its order, with values the warm-up can serve", () => {
  const policies = warmUpPolicies([limited], "warm-up-ollama", "warm-up", "warm-up-ollama");
  // The two the warm-up always shows, then the store's.
  assert.equal(policies.length, 3);
  const like = policies[2];
  assert.deepEqual(Object.keys(like), Object.keys(limited).filter((k) => !RECORD_ONLY.includes(k)));
  assert.equal(like.model, "warm-up-ollama");
  assert.equal(like.user, "warm-up");
  assert.equal(like.cluster, "warm-up-ollama");
  assert.deepEqual([like.allowIps, like.allowDomains], [[], []]);
  assert.deepEqual([like.rpm, like.weeklyTokens, like.maxConcurrent], [HIGH, HIGH, HIGH]);
  assert.ok(Date.parse(like.expiresAt!) > Date.now());
  // What shapes a request is the store key's own.
  assert.deepEqual([like.tools, like.thinking, like.systemPrompt, like.maxPredict], [
    true,
    true,
    "Be brief.",
    64,
  ]);
});

Deno.test("warm-up keys: one per shape, the store's after the warm-up's two, four shapes at most", () => {
  // As `key create` writes it.
  const plain: KeyRecord = {
    ...basePolicy("m1"),
    name: "cli",
    id: "key_2",
    digest: "f".repeat(64),
    hint: "gwk_ijkl…",
    createdAt: STAMP,
    updatedAt: STAMP,
  };
  const others = [{ ...plain, rpm: 5 }, { ...plain, dailyTokens: 5 }, { ...plain, monthlyTokens: 5 }];
  const policies = warmUpPolicies([plain, limited, { ...limited, id: "key_3" }, ...others], "t", "u", "c");
  // The key `key create` makes is the warm-up's first shape already; the second `limited` adds nothing.
  assert.equal(policies.length, 4);
  assert.deepEqual(policies[2].systemPrompt, "Be brief.");
  assert.equal(policies[3].rpm, HIGH);
  assert.equal(new Set(policies.map((p) => Object.keys(p).join())).size, 4);
});

Deno.test("the warm-up's server has a store server's fields in its order, with the warm-up's values", () => {
  const like: ServerRecord = {
    name: "gpu-1",
    url: "http://10.0.0.5:11434",
    models: [{ tag: "llama3", alias: "chat" }],
    kind: "ollama",
    weight: 3,
    enabled: true,
    slots: 4,
    createdAt: STAMP,
    updatedAt: STAMP,
  };
  const fields = {
    name: "warm-up-ollama",
    url: "http://127.0.0.1:1",
    kind: "ollama" as const,
    models: [{ tag: "warm-up-ollama" }],
    weight: 1,
    enabled: true,
  };
  const server = warmUpServer(like, fields);
  assert.deepEqual(Object.keys(server), ["name", "url", "models", "kind", "weight", "enabled", "slots"]);
  assert.deepEqual(server.models, [{ tag: "warm-up-ollama", alias: "chat" }]);
  assert.deepEqual([server.name, server.url, server.weight, server.slots], [fields.name, fields.url, 1, 4]);
  assert.deepEqual(warmUpServer(undefined, fields), fields);
});

Deno.test("the store's shapes: a server per kind, keys of distinct shapes, revoked keys left out", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    await kv.set(["keys", "key_1"], limited);
    await kv.set(["keys", "key_2"], { ...limited, id: "key_2" });
    // A shape of its own, but revoked.
    const { systemPrompt: _prompt, ...unprompted } = limited;
    await kv.set(["keys", "key_3"], { ...unprompted, id: "key_3", revokedAt: STAMP });
    const server = (name: string, kind: "ollama" | "openai"): ServerRecord => ({
      name,
      url: "http://127.0.0.1:1",
      kind,
      models: [{ tag: "m1" }],
      weight: 1,
      enabled: true,
      createdAt: STAMP,
      updatedAt: STAMP,
    });
    const shapes = await storeShapes(kv, [
      server("a", "ollama"),
      server("b", "ollama"),
      server("c", "openai"),
    ]);
    assert.deepEqual(shapes.servers.map((s) => s.name), ["a", "c"]);
    assert.deepEqual(shapes.keys.map((k) => k.id), ["key_1"]);
  } finally {
    kv.close();
  }
});

Deno.test("a warm-up with keys shaped like a store's, limits, user, cluster and expiry included, serves every chat", async () => {
  const report = await warmUp(defaultConfig({ logLevel: "warn" }), {
    kinds: new Set(["ollama", "openai"]),
    rounds: 4,
    shapes: { servers: [], keys: [limited] },
  });
  assert.equal(report.requests, 4 * 4 * 2);
  assert.equal(report.failed, 0);
});
