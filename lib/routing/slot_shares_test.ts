import assert from "node:assert/strict";
import { SlotShares } from "./slot_shares.ts";
import { flowOf, type Tenant } from "./tenants.ts";

const a: Tenant = { key: "key_a" };
const b: Tenant = { key: "key_b" };

/** Shares over 8 sure slots, with each tenant's running requests as the test sets them. */
function shares() {
  const running = new Map<string, number>();
  const s = new SlotShares(15_000, (t) => running.get(flowOf(t)) ?? 0);
  const room = () => {
    const used = [...running.values()].reduce((n, r) => n + r, 0);
    return { free: 8 - used, total: 8, sureFree: 8 - used, sureTotal: 8 };
  };
  /** How many more `t` may start now, one after the other. */
  const takes = (t: Tenant, now: number) => {
    let n = 0;
    while (s.mayTake("m", t, room(), now)) {
      running.set(flowOf(t), (running.get(flowOf(t)) ?? 0) + 1);
      n++;
    }
    return n;
  };
  return { s, running, takes };
}

Deno.test("a key that called once keeps one slot for itself, not half the model's slots", () => {
  const { s, running, takes } = shares();
  s.arrived("m", b, 0);
  running.set(flowOf(b), 0); // its one request ended
  s.arrived("m", a, 1);
  assert.equal(takes(a, 2), 7, "a keeps all but the one slot b used");
});

Deno.test("a key that ran four at once keeps up to its fair share, four of eight", () => {
  const { s, running, takes } = shares();
  for (let i = 0; i < 4; i++) {
    s.arrived("m", b, i);
    running.set(flowOf(b), i + 1);
  }
  running.set(flowOf(b), 0); // all four ended; b reads its answers
  s.arrived("m", a, 10);
  assert.equal(takes(a, 11), 4, "the half b would use is kept for it");
  s.arrived("m", b, 12);
  assert.equal(takes(b, 13), 4, "and b's next requests start at once");
});
