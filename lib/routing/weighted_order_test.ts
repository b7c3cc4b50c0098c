import assert from "node:assert/strict";
// @ts-types="@types/seedrandom"
import seedrandom from "seedrandom";
import { weightedOrder } from "./weighted_order.ts";

Deno.test("weighted order: first picks follow the weights (3:1 over 2,000 draws, seeded)", () => {
  const random = seedrandom("weights");
  const items = [{ name: "big", w: 3 }, { name: "small", w: 1 }];
  let big = 0;
  for (let i = 0; i < 2000; i++) if (weightedOrder(items, (x) => x.w, random)[0].name === "big") big++;
  // Expected 1,500; three standard deviations (≈58) either side.
  assert.ok(Math.abs(big - 1500) < 60, `big was picked ${big} times`);
});

Deno.test("weighted order: every item appears exactly once", () => {
  const random = seedrandom("perm");
  const items = [1, 2, 3, 4, 5];
  for (let i = 0; i < 100; i++) {
    assert.deepEqual([...weightedOrder(items, (x) => x, random)].sort(), items);
  }
});
