import assert from "node:assert/strict";
import { AffinityTable, prefixPrints } from "./affinity.ts";

type Message = { role: "system" | "user" | "assistant"; content: string };
const sys: Message = { role: "system", content: "You are terse." };
const u1: Message = { role: "user", content: "tell me about tides" };
const a1: Message = { role: "assistant", content: "The moon pulls the sea." };
const u2: Message = { role: "user", content: "and the sun?" };

function lookup(table: AffinityTable, messages: Message[], now: number, model = "m1") {
  return table.lookup(prefixPrints(model, messages), messages.map((m) => m.role), now);
}

Deno.test("affinity: a request continuing an earlier one finds its server; a repeat, another model or a stale entry does not", () => {
  const table = new AffinityTable(60_000, 100);
  table.remember(prefixPrints("m1", [sys, u1]), "gpu2", 0);
  assert.equal(lookup(table, [sys, u1, a1, u2], 1_000), "gpu2", "the next turn");
  assert.equal(lookup(table, [sys, u1], 1_000), undefined, "the same request again is no conversation");
  assert.equal(lookup(table, [sys, u1, a1, u2], 1_000, "m2"), undefined, "models never mix");
  assert.equal(lookup(table, [sys, { ...u1, content: "tell me about waves" }, a1, u2], 1_000), undefined);
  assert.equal(lookup(table, [sys, u1, a1, u2], 60_001), undefined, "expired");
});

Deno.test("affinity: a shared system prompt alone never pins requests, and the table stays within its bound", () => {
  const table = new AffinityTable(60_000, 2);
  table.remember(prefixPrints("m1", [sys]), "gpu1", 0);
  assert.equal(lookup(table, [sys, u2], 0), undefined, "only system messages matched");
  table.remember(prefixPrints("m1", [u1]), "a", 0);
  table.remember(prefixPrints("m1", [u2]), "b", 0);
  assert.equal(table.size, 2);
  assert.equal(lookup(table, [u1, a1, u2], 0), "a");
  table.remember(prefixPrints("m1", [a1]), "c", 0);
  assert.equal(table.size, 2);
  assert.equal(lookup(table, [u1, a1, u2], 0), undefined, "the oldest entry went first");
});

Deno.test("affinity: the bound drops an entry not used since it took its place before one refreshed since", () => {
  const table = new AffinityTable(60_000, 2);
  table.remember(prefixPrints("m1", [u1]), "a", 0);
  table.remember(prefixPrints("m1", [u2]), "b", 1);
  table.remember(prefixPrints("m1", [u1]), "a2", 2);
  table.remember(prefixPrints("m1", [a1]), "c", 3);
  assert.equal(table.size, 2);
  assert.equal(lookup(table, [u1, a1, u2], 4), "a2", "refreshed after the other: kept, with its new server");
  assert.equal(lookup(table, [u2, a1, u1], 4), undefined, "the entry used least recently went");
  assert.equal(lookup(table, [a1, u1, u2], 4), "c");
  // Past the bound again: the entry not refreshed since it took its place goes, the refreshed one was moved.
  table.remember(prefixPrints("m1", [sys, u2]), "d", 5);
  assert.equal(table.size, 2);
  assert.equal(lookup(table, [a1, u1, u2], 6), undefined);
  assert.equal(lookup(table, [u1, a1, u2], 6), "a2");
  assert.equal(lookup(table, [sys, u2, a1], 6), "d");
});
