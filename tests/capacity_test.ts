/**
 * The spec's routing promises on a fleet registered as most admins register it: truthful Ollama servers
 * (/api/ps empty until a model is asked for), no `--slots`, health probes on. A higher weight receives more
 * traffic, a failing server is tried and failed over, its breaker opens, a server enabled again gets traffic,
 * and a model spreads to a server with spare memory when the one holding it queues.
 */
import assert from "node:assert/strict";
// @ts-types="@types/seedrandom"
import seedrandom from "seedrandom";
import { Scenario, USER_HELLO } from "./harness.ts";
import { eventually } from "./support/wait_for.ts";

const A = "/v1/chat/completions";
const PROBING = { probe: true, config: { probeIntervalMs: 100 } } as const;

/** `total` requests, `parallel` at a time, each read to its end; resolves with each answer's status. */
async function send(s: Scenario, key: string, total: number, parallel: number, body: object = {}) {
  const statuses: number[] = [];
  let next = 0;
  await Promise.all(Array.from({ length: parallel }, async () => {
    while (next < total) {
      next++;
      const res = await s.gw.post(A, key, { messages: USER_HELLO, ...body });
      await res.text();
      statuses.push(res.status);
    }
  }));
  return statuses;
}

/** Both fakes probed at least once, so the gateway knows they hold nothing. */
async function probed(s: Scenario, ...names: string[]) {
  await eventually(
    "first probes",
    () => names.every((n) => s.gw.deps.servers.status().some((x) => x.name === n)),
  );
}

Deno.test("capacity: a 3:1 weight pair without --slots shares 400 requests, 8 at a time, 3:1", async () => {
  await using s = await Scenario.start([{ name: "heavy", weight: 3 }, { name: "light", weight: 1 }], {
    ...PROBING,
    random: seedrandom("three-to-one"),
  });
  await probed(s, "heavy", "light");
  const key = await s.gw.key();
  const statuses = await send(s, key, 400, 8);
  assert.ok(statuses.every((code) => code === 200));
  const heavy = s.fake("heavy").chats.length, light = s.fake("light").chats.length;
  assert.equal(heavy + light, 400);
  const share = heavy / 400;
  assert.ok(share >= 0.67 && share <= 0.83, `heavy served ${(share * 100).toFixed(1)}%`);
});

Deno.test("capacity: without --slots a failing server is tried, failed over, and its breaker opens", async () => {
  await using s = await Scenario.start([{ name: "bad" }, { name: "good" }], {
    probe: true,
    random: seedrandom("failing"),
    config: { probeIntervalMs: 100, breakerFailures: 3, breakerOpenMs: 60_000 },
  });
  await probed(s, "bad", "good");
  s.fake("bad").mode = "error";
  const key = await s.gw.key();
  for (let i = 0; i < 30; i++) {
    const res = await s.gw.post(A, key, { messages: USER_HELLO });
    assert.equal(res.status, 200);
    assert.equal((await res.json()).choices[0].message.content, "Hello from good");
  }
  assert.equal(s.fake("bad").chats.length, 3, "tried until its breaker opened, then skipped");
  assert.equal(s.gw.deps.servers.status().find((x) => x.name === "bad")?.breaker, "open");
});

Deno.test("capacity: a server enabled again gets traffic as soon as the gateway sees it", async () => {
  await using s = await Scenario.start([{ name: "a" }, { name: "b" }], {
    ...PROBING,
    random: seedrandom("re-enabled"),
  });
  await probed(s, "a", "b");
  const key = await s.gw.key();
  const enabled = async (on: boolean) => {
    await s.gw.catalog.servers.update("b", (b) => ({ ...b, enabled: on }));
    await eventually("the gateway sees it", () => s.gw.deps.view.snapshot.servers.get("b")?.enabled === on);
  };
  await enabled(false);
  await send(s, key, 20, 4);
  assert.equal(s.fake("b").chats.length, 0);
  await enabled(true);
  const before = s.fake("a").chats.length;
  await send(s, key, 20, 4);
  // Equal weights: b's share of the next 20 is 10 (a miss of all 20 has odds of one in a million).
  assert.ok(s.fake("b").chats.length >= 5, `b got ${s.fake("b").chats.length} of 20`);
  assert.equal(s.fake("a").chats.length - before + s.fake("b").chats.length, 20);
});

Deno.test("capacity: a model spreads to a server with spare memory when the one holding it queues", async () => {
  // The warm server outweighs the other 100:1, runs one request at a time and queues the rest inside.
  await using s = await Scenario.start(
    [{ name: "warm", weight: 100 }, { name: "spare", weight: 1 }],
    PROBING,
  );
  const warm = s.fake("warm");
  warm.slots = 1;
  warm.resident.add("m1");
  // As with a model, generating the answer takes several times as long as its first token, and a wait
  // behind one (about 360 ms) is well past the noise a learned figure allows for (100 ms).
  for (const fake of [warm, s.fake("spare")]) {
    fake.chunkDelayMs = 30;
    fake.reply = () => ({ content: "one two three four five six seven eight nine ten eleven twelve" });
  }
  await probed(s, "warm", "spare");
  await eventually("warm seen holding m1", () => s.gw.deps.servers.hasLoaded("warm", "m1") === true);
  const key = await s.gw.key();
  const statuses = await send(s, key, 24, 6, { stream: true });
  assert.ok(statuses.every((code) => code === 200));
  assert.ok(s.fake("spare").chats.length >= 6, `spare served ${s.fake("spare").chats.length} of 24`);
  assert.deepEqual(s.fake("spare").resident, new Set(["m1"]), "the model was loaded there");
  // Learning lets one request probe past the server's one slot; nothing more piles up inside it.
  assert.ok(warm.peakHeld <= 2, `warm held ${warm.peakHeld} at once`);
  const status = s.gw.deps.servers.status().find((x) => x.name === "warm")!;
  assert.deepEqual([status.slots, status.slotsSource], [1, "learned"]);
});

Deno.test("capacity: the figure the scheduler uses, and where it came from, in /admin/status and /metrics", async () => {
  const adminToken = "capacity-admin-token";
  await using s = await Scenario.start([{ name: "declared", slots: 3 }, { name: "learning" }], {
    probe: true,
    config: { probeIntervalMs: 100, adminToken },
  });
  await probed(s, "declared", "learning");
  const key = await s.gw.key();
  await send(s, key, 4, 1);
  const admin = { Authorization: `Bearer ${adminToken}` };
  const status = await (await fetch(`${s.gw.url}/admin/status`, { headers: admin })).json();
  const rows = status.health.servers as { name: string; slots: number; slotsSource: string }[];
  const row = (name: string) => rows.find((r) => r.name === name)!;
  assert.deepEqual([row("declared").slots, row("declared").slotsSource], [3, "declared"]);
  assert.equal(row("learning").slotsSource, "learned");
  assert.ok(row("learning").slots >= 1);
  const metrics = await (await fetch(`${s.gw.url}/metrics`, { headers: admin })).text();
  assert.match(metrics, /gateway_server_slots\{server="declared",source="declared"\} 3/);
  assert.match(metrics, /gateway_server_slots\{server="learning",source="learned"\} \d+/);
});

Deno.test("capacity: short streams from a server that runs them all at once do not wait at the gateway", async () => {
  await using s = await Scenario.start([{ name: "wide" }], PROBING);
  await probed(s, "wide");
  const key = await s.gw.key();
  const waited: number[] = [];
  let next = 0;
  // Each answer comes whole at once, so no two streams are ever seen running together.
  await Promise.all(Array.from({ length: 16 }, async () => {
    while (next < 600) {
      const n = next++;
      const res = await s.gw.post(A, key, { messages: USER_HELLO, stream: true });
      await res.text();
      assert.equal(res.status, 200);
      if (n >= 300 && res.headers.has("X-Gateway-Queue-Ms")) waited.push(n);
    }
  }));
  // The figure follows what was sent: one more than the most ever in flight there, not a few slots.
  const status = s.gw.deps.servers.status().find((x) => x.name === "wide")!;
  assert.ok(status.slots >= 4, `learned ${status.slots} slots`);
  assert.ok(waited.length <= 15, `${waited.length} of the last 300 streams waited for a slot`);
});
