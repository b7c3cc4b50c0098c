import assert from "node:assert/strict";
// @ts-types="@types/seedrandom"
import seedrandom from "seedrandom";
import type { ServerRecord } from "../store/records.ts";
import type { Candidate } from "./candidates.ts";
import { rank } from "./scorer.ts";
import { ServerState } from "./server_state.ts";

function candidate(name: string, weight = 1, slots?: number): Candidate {
  const server: ServerRecord = {
    name,
    url: `http://${name}`,
    kind: "ollama",
    models: [{ tag: "m1" }, { tag: "m2" }],
    weight,
    enabled: true,
    slots,
    createdAt: "",
    updatedAt: "",
  };
  return { server, model: server.models[0] };
}

/** How often each candidate comes first over `n` rankings. */
function firsts(candidates: Candidate[], state: ServerState, n: number, seed: string): Map<string, number> {
  const random = seedrandom(seed);
  const counts = new Map<string, number>();
  for (let i = 0; i < n; i++) {
    const first = rank(candidates, state, { random }).order[0].server.name;
    counts.set(first, (counts.get(first) ?? 0) + 1);
  }
  return counts;
}

Deno.test("scorer: among servers with room the weights decide, whatever each one is running", () => {
  const state = new ServerState({ now: () => 0 });
  const heavy = candidate("heavy", 3, 8), light = candidate("light", 1, 8);
  state.probed("heavy", { ok: true, models: ["m1"], loaded: ["m1"] });
  state.probed("light", { ok: true, models: ["m1"], loaded: ["m1"] });
  // Three in flight on the heavy one, none on the light one: still 3:1.
  for (let i = 0; i < 3; i++) state.begin("heavy", "m1");
  const counts = firsts([heavy, light], state, 4000, "weights");
  const share = counts.get("heavy")! / 4000;
  assert.ok(Math.abs(share - 0.75) < 0.03, `heavy came first in ${(share * 100).toFixed(1)}%`);
});

Deno.test("scorer: a cold server with spare memory is drawn by weight beside a loaded one", () => {
  const state = new ServerState({ now: () => 0 });
  state.probed("warm", { ok: true, models: ["m1"], loaded: ["m1"] });
  state.probed("empty", { ok: true, models: ["m1"], loaded: [] });
  const counts = firsts([candidate("warm"), candidate("empty")], state, 2000, "spare");
  const share = counts.get("empty")! / 2000;
  assert.ok(Math.abs(share - 0.5) < 0.04, `the empty server came first in ${(share * 100).toFixed(1)}%`);
  const ranking = rank([candidate("empty")], state, { random: Math.random });
  assert.equal(ranking.reason, "cold");
  assert.equal(ranking.warm, true, "loading into spare memory costs nobody");
});

Deno.test("scorer: a server that would have to unload another model comes after one holding the model", () => {
  const state = new ServerState({ now: () => 0 });
  state.probed("warm", { ok: true, models: ["m1", "m2"], loaded: ["m1"] });
  state.probed("busy-with-m2", { ok: true, models: ["m1", "m2"], loaded: ["m2"] });
  const counts = firsts([candidate("busy-with-m2", 100), candidate("warm", 1)], state, 200, "evict");
  assert.equal(counts.get("warm"), 200);
});

Deno.test("scorer: a full server comes after every server with room, and a full first choice says so", () => {
  const state = new ServerState({ now: () => 0 });
  const full = candidate("full", 100, 1), free = candidate("free", 1, 1);
  state.begin("full", "m1");
  assert.equal(firsts([full, free], state, 200, "full").get("free"), 200);
  state.begin("free", "m1");
  const ranking = rank([full, free], state, { random: Math.random });
  assert.equal(ranking.room, false);
  assert.deepEqual(ranking.order.map((c) => c.slots), [1, 1]);
});

Deno.test("scorer: without --slots the learned figure limits a server, and the candidate carries it", () => {
  const state = new ServerState({ now: () => 0, learning: { start: 2 } });
  const c = candidate("s");
  state.begin("s", "m1");
  assert.equal(rank([c], state, { random: Math.random }).room, true);
  state.begin("s", "m1");
  const ranking = rank([c], state, { random: Math.random });
  assert.equal(ranking.room, false);
  assert.equal(ranking.order[0].slots, 2);
  assert.deepEqual(state.slots("s", undefined), { slots: 2, source: "learned", sure: 2 });
  assert.deepEqual(state.slots("s", 7), { slots: 7, source: "declared", sure: 7 });
});
