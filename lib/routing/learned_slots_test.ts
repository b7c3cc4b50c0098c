import assert from "node:assert/strict";
import { LearnedSlots } from "./learned_slots.ts";

const options = { start: 4, max: 64, holdMs: 30_000, marginMs: 25, proofMs: 600_000 };
/** The first queued answer is only suspected: one more confirms it. */
const suspect = (learned: LearnedSlots, at: number) => learned.observe(queued(9), at);
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

Deno.test("learned slots: a queued answer sets the figure below its level and holds it there", () => {
  const learned = new LearnedSlots(options);
  for (let i = 0; i < 4; i++) learned.observe(clean(1), i);
  learned.observe(queued(3), 10);
  assert.equal(learned.limit, 4, "one queued answer may be a pause of the gateway's own");
  learned.observe(queued(3), 20);
  assert.equal(learned.limit, 2);
  learned.observe(clean(2), 30);
  assert.equal(learned.limit, 2, "the queueing level is not tried again within the hold time");
  learned.observe(clean(2), 20 + options.holdMs);
  assert.equal(learned.limit, 3, "after it, the figure probes again");
});

Deno.test("learned slots: a long wait with nothing ended in between is not queueing, a load included", () => {
  const learned = new LearnedSlots(options);
  for (let i = 0; i < 4; i++) learned.observe(clean(1), i);
  for (let i = 0; i < 3; i++) learned.observe({ level: 3, ms: 900, othersEnded: false, warm: true }, 10 + i);
  learned.observe({ level: 4, ms: 9000, othersEnded: false, warm: false }, 20);
  assert.equal(learned.limit, 5, "four ran at once after the load");
  suspect(learned, 21);
  learned.observe({ level: 5, ms: 9000, othersEnded: true, warm: false, streaming: 2 }, 22);
  assert.equal(learned.limit, 2, "one that waited for the load and then for a slot shows the queue");
});

Deno.test("learned slots: a wait within twice the usual first byte and the margin is not queueing", () => {
  const learned = new LearnedSlots(options);
  for (let i = 0; i < 8; i++) learned.observe(clean(1), i);
  for (let i = 0; i < 4; i++) {
    learned.observe({ level: 3, ms: 2 * 100 + 20, othersEnded: true, warm: true }, 10 + i);
  }
  assert.equal(learned.limit, 4);
  suspect(learned, 19);
  learned.observe({ level: 3, ms: 2 * 100 + 30, othersEnded: true, warm: true }, 20);
  assert.equal(learned.limit, 2);
});

Deno.test("learned slots: a queued stream sets the figure to the streams running when it began, if fewer", () => {
  const learned = new LearnedSlots(options);
  for (let i = 0; i < 4; i++) learned.observe(clean(1), i);
  suspect(learned, 5);
  learned.observe({ ...queued(4), streaming: 1 }, 10);
  assert.equal(learned.limit, 1);
  learned.observe(clean(1), 11);
  assert.equal(learned.limit, 2, "a request running alone cannot have queued");
});

Deno.test("learned slots: never below one, never above the maximum", () => {
  const learned = new LearnedSlots({ ...options, start: 1, max: 3 });
  suspect(learned, 0);
  learned.observe({ ...queued(2), streaming: 0 }, 0);
  assert.equal(learned.limit, 1);
  for (let level = 1; level <= 5; level++) learned.observe(clean(level), 10 + level);
  assert.equal(learned.limit, 3);
});

Deno.test("learned slots: streams seen running at once set a floor a slow first byte cannot go below", () => {
  const learned = new LearnedSlots({ ...options, start: 1 });
  learned.sawRunning(2, 0);
  assert.equal(learned.limit, 2);
  for (let i = 0; i < 4; i++) learned.observe(clean(1), i);
  // A long prompt's evaluation, while the other stream ended: it looks like a wait at level 2.
  learned.observe({ level: 2, ms: 900, othersEnded: true, warm: true, streaming: 1 }, 10);
  learned.observe({ level: 2, ms: 900, othersEnded: true, warm: true, streaming: 1 }, 11);
  assert.equal(learned.limit, 2);
  // Once the proof is old, the same evidence counts.
  learned.observe({ level: 2, ms: 900, othersEnded: true, warm: true, streaming: 1 }, 700_000);
  learned.observe({ level: 2, ms: 900, othersEnded: true, warm: true, streaming: 1 }, 700_001);
  assert.equal(learned.limit, 1);
});

Deno.test("learned slots: a late first byte long after the last end there is a long prompt, not a wait", () => {
  const learned = new LearnedSlots(options);
  for (let i = 0; i < 8; i++) learned.observe(clean(1), i);
  // Another request ended 50 ms into a 900 ms prompt evaluation: no slot was waited for.
  for (let i = 0; i < 3; i++) learned.observe({ ...queued(3), sinceEndMs: 850 }, 10 + i);
  assert.equal(learned.limit, 4, "long prompts seen with ends early in them leave the figure");
  // The same late first byte coming right after an end there: it started when that end freed a slot.
  learned.observe({ ...queued(3), sinceEndMs: 120 }, 20);
  learned.observe({ ...queued(3), sinceEndMs: 120 }, 21);
  assert.equal(learned.limit, 2);
});

Deno.test("learned slots: short streams that end as they begin raise the figure under load, as whole answers do", () => {
  const learned = new LearnedSlots(options);
  for (let i = 0; i < 8; i++) learned.observe(clean(1), i);
  // Each stream's first byte came as quickly as usual while others ended, and no two were seen running at once.
  for (let level = 4; level < 12; level++) {
    learned.observe({ level, ms: 90, othersEnded: true, warm: true, streaming: 1 }, 10 + level);
  }
  assert.equal(learned.limit, 12);
  // One slower than usual (though not queued) says nothing either way.
  learned.observe({ level: 12, ms: 150, othersEnded: true, warm: true, streaming: 1 }, 30);
  assert.equal(learned.limit, 12);
});
