import assert from "node:assert/strict";
import { Allowance, allowanceSize } from "./allowance.ts";

const DAY = "d:2026-11-22";

Deno.test("an allowance is an eighth of this process's part of the headroom, or none near the end", () => {
  assert.equal(allowanceSize(1_000_000_000, 1, 4106), 125_000_000);
  assert.equal(allowanceSize(1_000_000_000, 4, 4106), 31_250_000);
  assert.equal(allowanceSize(16 * 110 * 8, 1, 110), 16 * 110, "16 requests' worth: still lent");
  assert.equal(allowanceSize(16 * 110 * 8 - 1, 1, 110), 0, "fewer: every request asks the store");
  assert.equal(allowanceSize(100, 1, 20), 0);
});

Deno.test("a growth is shown at once and usable only once its commit landed", () => {
  const a = new Allowance();
  const growth = a.resize(1000, DAY, "day:1")!;
  assert.equal(growth.tokens, 1000);
  assert.equal(a.shown, 1000, "every share computed from now on shows it");
  assert.equal(a.covers(DAY, "day:1", 1), false, "not usable before its commit landed");
  assert.equal(a.resize(1000, DAY, "day:1"), undefined, "one growth at a time");
  a.landed(growth, true);
  assert.equal(a.usable, 1000);
  assert.ok(a.covers(DAY, "day:1", 1000));
  assert.equal(a.covers(DAY, "day:2", 1), false, "sized for other caps");
  assert.equal(a.covers("d:2026-11-23", "day:1", 1), false, "another day");
});

Deno.test("a growth that did not land is dropped, and the share stops showing it", () => {
  const a = new Allowance();
  const growth = a.resize(1000, DAY, "day:1")!;
  a.landed(growth, false);
  assert.equal(a.usable, 0);
  assert.equal(a.shown, 0);
  assert.ok(a.empty);
});

Deno.test("a shrink applies at once; a growth asked for before it is dropped when it lands", () => {
  const a = new Allowance();
  a.landed(a.resize(1000, DAY, "day:1")!, true);
  a.usable -= 200;
  const growth = a.resize(1000, DAY, "day:1")!;
  assert.equal(growth.tokens, 200);
  assert.equal(a.resize(100, DAY, "day:1"), undefined);
  assert.equal(a.usable, 100, "shrunk at once, before any commit shows it");
  assert.equal(a.shown, 300, "the share still shows the growth under way: more than held, never less");
  a.landed(growth, true);
  assert.equal(a.usable, 100, "asked for before the shrink: not used");
});

Deno.test("a new day starts from nothing, and clearing drops what is under way", () => {
  const a = new Allowance();
  a.landed(a.resize(1000, DAY, "day:1")!, true);
  const next = a.resize(500, "d:2026-11-23", "day:1")!;
  assert.equal(a.usable, 0, "the old day's allowance counts on the old day only");
  assert.equal(next.tokens, 500);
  a.clear();
  a.landed(next, true);
  assert.equal(a.usable, 0);
  assert.ok(a.empty && !a.lending);
});

Deno.test("a request that billed more than it reserved leaves a debt the next growth makes up", () => {
  const a = new Allowance();
  a.landed(a.resize(1000, DAY, "day:1")!, true);
  a.usable -= 1000;
  a.usable += 1000 - 1050;
  assert.equal(a.usable, -50);
  assert.equal(a.shown, 0);
  const growth = a.resize(1000, DAY, "day:1")!;
  assert.equal(growth.tokens, 1050);
  a.landed(growth, true);
  assert.equal(a.usable, 1000);
});
