/** @module The throttle of wrong admin tokens: its waits, who shares one, when it forgets, and its bound. */
import assert from "node:assert/strict";
import { AdminThrottle, FREE_FAILURES, throttleKey } from "./admin_throttle.ts";

Deno.test("after the free failures each one doubles the wait, up to five minutes; half an hour later it is forgotten", () => {
  let now = 1_000_000;
  const throttle = new AdminThrottle(() => now);
  const waits: number[] = [];
  for (let i = 0; i < FREE_FAILURES + 12; i++) {
    throttle.failed("203.0.113.5");
    waits.push(throttle.retryAfter("203.0.113.5"));
    now += waits.at(-1)! * 1000;
  }
  assert.deepEqual(waits, [0, 0, 0, 0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300, 300]);
  assert.equal(throttle.retryAfter("203.0.113.6"), 0, "another address does not wait");
  now += 30 * 60_000;
  throttle.failed("198.51.100.1");
  assert.equal(throttle.size, 1, "the old address is forgotten at the next failure");
  throttle.failed("203.0.113.5");
  assert.equal(throttle.retryAfter("203.0.113.5"), 0, "and starts over");
});

Deno.test("an IPv6 client is counted by its /64; mapped IPv4 as IPv4; no address as one unknown client", () => {
  assert.equal(throttleKey("2001:db8:1:2:aaaa::1"), throttleKey("2001:db8:1:2:ffff::9"));
  assert.notEqual(throttleKey("2001:db8:1:2::1"), throttleKey("2001:db8:1:3::1"));
  assert.equal(throttleKey("::ffff:192.0.2.1"), "192.0.2.1");
  assert.equal(throttleKey(undefined), "unknown");
  assert.equal(throttleKey("not an address"), "unknown");
});

Deno.test("the table holds at most its bound: the address that failed least recently goes first", () => {
  let now = 0;
  const throttle = new AdminThrottle(() => now, 100);
  for (let i = 0; i < 250; i++) {
    now += 1;
    for (let k = 0; k <= FREE_FAILURES; k++) throttle.failed(`10.0.${i >> 8}.${i & 255}`);
  }
  assert.equal(throttle.size, 100);
  assert.equal(throttle.retryAfter("10.0.0.149"), 0, "evicted");
  assert.equal(throttle.retryAfter("10.0.0.249"), 1, "kept");
});
