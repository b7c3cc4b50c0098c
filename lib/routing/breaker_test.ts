import assert from "node:assert/strict";
import { Breaker, type Pass } from "./breaker.ts";

function setup(options: { failureThreshold?: number; openMs?: number; trialLeaseMs?: number } = {}) {
  const clock = { t: 1_000_000 };
  const breaker = new Breaker({ now: () => clock.t, ...options });
  return { clock, breaker };
}

function admitted(breaker: Breaker): Pass {
  const pass = breaker.admit();
  assert.ok(pass, `expected a pass while ${breaker.state}`);
  return pass;
}

function failTimes(breaker: Breaker, n: number) {
  for (let i = 0; i < n; i++) breaker.failure(admitted(breaker));
}

Deno.test("breaker: defaults are 5 failures and 30 s", () => {
  const { breaker } = setup();
  assert.equal(breaker.failureThreshold, 5);
  assert.equal(breaker.openMs, 30_000);
  failTimes(breaker, 4);
  assert.equal(breaker.state, "closed");
  failTimes(breaker, 1);
  assert.equal(breaker.state, "open");
});

Deno.test("breaker: only consecutive failures open it; a success resets the count", () => {
  const { breaker } = setup({ failureThreshold: 3 });
  failTimes(breaker, 2);
  assert.equal(breaker.failures, 2);
  breaker.success(admitted(breaker));
  assert.equal(breaker.failures, 0);
  failTimes(breaker, 2);
  assert.equal(breaker.state, "closed");
  failTimes(breaker, 1);
  assert.equal(breaker.state, "open");
  assert.equal(breaker.admit(), undefined);
  assert.equal(breaker.wouldAdmit(), false);
});

Deno.test("breaker: half-open after the open time, one trial, closed on its success", () => {
  const { clock, breaker } = setup({ failureThreshold: 1, openMs: 10_000 });
  failTimes(breaker, 1);
  clock.t += 9_999;
  assert.equal(breaker.state, "open");
  assert.equal(breaker.admit(), undefined);
  clock.t += 1;
  assert.equal(breaker.state, "half-open");
  assert.equal(breaker.wouldAdmit(), true);
  const trial = admitted(breaker);
  assert.equal(trial.trial, true);
  assert.equal(breaker.admit(), undefined, "a second caller must not get the trial");
  assert.equal(breaker.wouldAdmit(), false);
  breaker.success(trial);
  assert.equal(breaker.state, "closed");
  assert.equal(admitted(breaker).trial, false);
});

Deno.test("breaker: a failed trial opens it again with the timer restarted", () => {
  const { clock, breaker } = setup({ failureThreshold: 1, openMs: 10_000 });
  failTimes(breaker, 1);
  clock.t += 25_000;
  const trial = admitted(breaker);
  breaker.failure(trial);
  assert.equal(breaker.state, "open");
  clock.t += 9_999;
  assert.equal(breaker.admit(), undefined);
  clock.t += 1;
  assert.equal(admitted(breaker).trial, true);
});

Deno.test("breaker: outcomes of requests admitted before a state change are ignored", () => {
  const { clock, breaker } = setup({ failureThreshold: 2, openMs: 1_000 });
  const early = admitted(breaker);
  failTimes(breaker, 2);
  breaker.success(early);
  assert.equal(breaker.state, "open", "an old success must not close an open breaker");
  clock.t += 1_000;
  const trial = admitted(breaker);
  breaker.success(early);
  assert.equal(breaker.state, "half-open", "an old success is not the trial's");
  breaker.success(trial);
  const fresh = admitted(breaker);
  breaker.failure(early);
  assert.equal(breaker.failures, 0, "an old failure must not count after recovery");
  breaker.failure(fresh);
  assert.equal(breaker.failures, 1);
  breaker.failure(trial);
  assert.equal(breaker.state, "open", "a successful trial goes on as an ordinary request");
});

Deno.test("breaker: release frees the trial at once and changes nothing else", () => {
  const { clock, breaker } = setup({ failureThreshold: 1, openMs: 1_000 });
  failTimes(breaker, 1);
  clock.t += 1_000;
  const abandoned = admitted(breaker);
  assert.equal(breaker.admit(), undefined);
  breaker.release(abandoned);
  assert.equal(breaker.state, "half-open");
  const next = admitted(breaker);
  assert.notEqual(next, abandoned);
  breaker.release(abandoned);
  assert.equal(breaker.admit(), undefined, "releasing an older trial must not free the current one");
  breaker.success(next);
  breaker.release(admitted(breaker));
  assert.equal(breaker.state, "closed");
});

Deno.test("breaker: an unreported trial's lease runs out, then another trial is admitted", () => {
  const { clock, breaker } = setup({ failureThreshold: 1, openMs: 1_000, trialLeaseMs: 5_000 });
  failTimes(breaker, 1);
  clock.t += 1_000;
  const lost = admitted(breaker);
  clock.t += 4_999;
  assert.equal(breaker.admit(), undefined);
  clock.t += 1;
  assert.equal(breaker.wouldAdmit(), true);
  const second = admitted(breaker);
  assert.equal(breaker.admit(), undefined);
  breaker.success(lost);
  assert.equal(breaker.state, "closed", "the expired trial's late success still counts");
  breaker.failure(second);
  assert.equal(breaker.failures, 0, "the other trial's outcome is stale after the decision");
});

Deno.test("breaker: a failed probe opens it at once and restarts the timer", () => {
  const { clock, breaker } = setup({ openMs: 10_000 });
  breaker.probeFailed();
  assert.equal(breaker.state, "open");
  clock.t += 8_000;
  breaker.probeFailed();
  clock.t += 8_000;
  assert.equal(breaker.state, "open");
  clock.t += 2_000;
  assert.equal(breaker.state, "half-open");
});

Deno.test("breaker: a passing probe after a failed one moves open to half-open early", () => {
  const { breaker } = setup({ openMs: 10_000 });
  breaker.probeFailed();
  breaker.probePassed();
  assert.equal(breaker.state, "half-open");
  const trial = admitted(breaker);
  assert.equal(trial.trial, true);
  assert.equal(breaker.admit(), undefined);
  breaker.success(trial);
  assert.equal(breaker.state, "closed");
});

Deno.test("breaker: passing probes do not shorten an open period caused by request failures", () => {
  const { clock, breaker } = setup({ failureThreshold: 1, openMs: 10_000 });
  failTimes(breaker, 1);
  breaker.probePassed();
  assert.equal(breaker.state, "open");
  // After a failed trial that followed a probe-driven recovery, the full wait applies again.
  breaker.probeFailed();
  breaker.probePassed();
  breaker.failure(admitted(breaker));
  breaker.probePassed();
  assert.equal(breaker.state, "open");
  clock.t += 10_000;
  assert.equal(breaker.state, "half-open");
});

Deno.test("breaker: probes never close it and never reset the failure count", () => {
  const { breaker } = setup({ failureThreshold: 3 });
  failTimes(breaker, 2);
  breaker.probePassed();
  assert.equal(breaker.failures, 2);
  breaker.probeFailed();
  breaker.probePassed();
  breaker.probePassed();
  assert.equal(breaker.state, "half-open");
});
