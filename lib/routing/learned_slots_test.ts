import assert from "node:assert/strict";
import { LearnedSlots } from "./learned_slots.ts";

const options = { start: 4, max: 64, holdMs: 30_000, marginMs: 25 };
const clean = (level: number) => ({ level, ms: 100, othersEnded: false, warm: true });
const queued = (level: number) => ({ level, ms: 900, othersEnded: true, warm: true });

Deno.test("learned slots: a server that runs more than the figure without queueing raises it one at a time", () => {
  const learned = new LearnedSlots(options);
  learned.observe(clean(1), 0);
  learned.observe(clean(3), 1);
  assert.equal(learned.limit, 4, "below the figure says nothing new");
  learned.observe(clean(4), 2);
  assert.equal(learned.limit, 5);
  learned.observe(clean(5), 3);
  learned.observe(clean(6), 4);
  assert.equal(learned.limit, 7);
});

Deno.test("learned slots: two queued answers at a level set the figure below it and hold it there", () => {
  const learned = new LearnedSlots(options);
  for (let i = 0; i < 4; i++) learned.observe(clean(1), i);
  learned.observe(queued(3), 10);
  assert.equal(learned.limit, 4, "one queued answer may be noise");
  learned.observe(queued(3), 20);
  assert.equal(learned.limit, 2);
  learned.observe(clean(2), 30);
  assert.equal(learned.limit, 2, "the queueing level is not tried again within the hold time");
  learned.observe(clean(2), 20 + options.holdMs);
  assert.equal(learned.limit, 3, "after it, the figure probes again");
});

Deno.test("learned slots: a long wait with nothing ended in between, or one that began cold, is not queueing", () => {
  const learned = new LearnedSlots(options);
  for (let i = 0; i < 4; i++) learned.observe(clean(1), i);
  for (let i = 0; i < 3; i++) learned.observe({ level: 3, ms: 900, othersEnded: false, warm: true }, 10 + i);
  for (let i = 0; i < 3; i++) learned.observe({ level: 3, ms: 9000, othersEnded: true, warm: false }, 20 + i);
  assert.equal(learned.limit, 4);
});

Deno.test("learned slots: a wait within twice the usual first byte and the margin is not queueing", () => {
  const learned = new LearnedSlots(options);
  for (let i = 0; i < 8; i++) learned.observe(clean(1), i);
  for (let i = 0; i < 4; i++) {
    learned.observe({ level: 3, ms: 2 * 100 + 20, othersEnded: true, warm: true }, 10 + i);
  }
  assert.equal(learned.limit, 4);
  learned.observe({ level: 3, ms: 2 * 100 + 30, othersEnded: true, warm: true }, 20);
  learned.observe({ level: 3, ms: 2 * 100 + 30, othersEnded: true, warm: true }, 21);
  assert.equal(learned.limit, 2);
});

Deno.test("learned slots: never below one, never above the maximum", () => {
  const learned = new LearnedSlots({ ...options, start: 1, max: 3 });
  learned.observe(queued(1), 0);
  learned.observe(queued(1), 1);
  assert.equal(learned.limit, 1);
  for (let level = 1; level <= 5; level++) learned.observe(clean(level), 10 + level);
  assert.equal(learned.limit, 3);
});
