import assert from "node:assert/strict";
import { BackendFailure, ImageNotSupported, InvalidRequest } from "../errors.ts";
import { canonicalModel, outcomeOf, ServerState, type ServerStatus, type Ticket } from "./server_state.ts";

function setup(breaker = { failureThreshold: 2, openMs: 10_000 }) {
  const clock = { t: 1_700_000_000_000 };
  const state = new ServerState({ now: () => clock.t, breaker });
  const one = (name = "a"): ServerStatus => {
    const found = state.status().find((s) => s.name === name);
    assert.ok(found, `no status for ${name}`);
    return found;
  };
  const begun = (name = "a"): Ticket => {
    const ticket = state.begin(name);
    assert.ok(ticket, `${name} refused a request`);
    return ticket;
  };
  return { clock, state, one, begun };
}

Deno.test("server state: a server not heard of yet is routable and reports unknown health", () => {
  const { state, one, begun } = setup();
  assert.equal(state.isRoutable("a", "m1"), true);
  assert.deepEqual(state.status(), []);
  state.finish(begun(), "ok");
  assert.equal(one().health, "unknown");
  assert.equal(one().breaker, "closed");
});

Deno.test("server state: in-flight, requests and errors; excused failures do not count against the server", () => {
  const { state, one, begun } = setup({ failureThreshold: 3, openMs: 10_000 });
  const [a, b, c, d] = [begun(), begun(), begun(), begun()];
  assert.equal(one().inFlight, 4);
  state.finish(a, "ok");
  state.finish(b, "failed");
  state.finish(c, "excused");
  state.finish(c, "failed"); // a second finish of one ticket is ignored
  assert.equal(one().inFlight, 1);
  assert.equal(one().requestsLastMinute, 3);
  assert.equal(one().errorsLastMinute, 1);
  assert.equal(one().consecutiveFailures, 1);
  state.finish(d, "excused");
  assert.equal(one().consecutiveFailures, 1);
  assert.equal(one().inFlight, 0);
});

Deno.test("server state: request counts slide out of the last minute", () => {
  const { clock, state, one, begun } = setup();
  state.finish(begun(), "failed");
  clock.t += 30_000;
  state.finish(begun(), "ok");
  assert.equal(one().requestsLastMinute, 2);
  clock.t += 31_000;
  assert.equal(one().requestsLastMinute, 1);
  assert.equal(one().errorsLastMinute, 0);
  clock.t += 30_000;
  assert.equal(one().requestsLastMinute, 0);
});

Deno.test("server state: latency p50/p95 over recent answered requests only", () => {
  const { clock, state, one, begun } = setup({ failureThreshold: 100, openMs: 1 });
  for (let ms = 1; ms <= 100; ms++) {
    const t = begun();
    clock.t += ms;
    state.finish(t, "ok");
  }
  const slowFailure = begun();
  clock.t += 60_000;
  state.finish(slowFailure, "failed");
  assert.equal(one().latencySamples, 100);
  assert.equal(one().latencyP50Ms, 50);
  assert.equal(one().latencyP95Ms, 95);
  const streamed = begun();
  clock.t += 7;
  state.answered(streamed);
  clock.t += 50_000;
  state.finish(streamed, "ok");
  assert.equal(one().latencySamples, 101, "a streamed request is timed to its first answer");
  assert.equal(one().latencyP95Ms, 95);
});

Deno.test("server state: latency memory is bounded by sample count and age", () => {
  const clock = { t: 0 };
  const state = new ServerState({ now: () => clock.t, latencySamples: 10, latencyMaxAgeMs: 1_000 });
  for (let i = 0; i < 25; i++) {
    const t = state.begin("a")!;
    clock.t += i < 15 ? 500 : 5;
    state.finish(t, "ok");
  }
  const [s] = state.status();
  assert.equal(s.latencySamples, 10);
  assert.equal(s.latencyP95Ms, 5, "samples older than the ring are gone");
  clock.t += 1_001;
  assert.equal(state.status()[0].latencySamples, 0);
  assert.equal(state.status()[0].latencyP50Ms, undefined);
});

Deno.test("server state: the breaker opens on counted failures and refuses requests", () => {
  const { clock, state, one, begun } = setup();
  state.finish(begun(), "failed");
  state.finish(begun(), "failed");
  assert.equal(one().breaker, "open");
  assert.equal(state.begin("a"), undefined);
  assert.equal(state.isRoutable("a", "m1"), false);
  clock.t += 10_000;
  assert.equal(one().breaker, "half-open");
  assert.equal(state.isRoutable("a", "m1"), true);
  const trial = begun();
  assert.equal(state.begin("a"), undefined, "only one trial while half-open");
  assert.equal(state.isRoutable("a", "m1"), false);
  state.finish(trial, "ok");
  assert.equal(one().breaker, "closed");
});

Deno.test("server state: an excused trial frees the slot; an answered trial closes before the stream ends", () => {
  const { clock, state, one, begun } = setup();
  state.finish(begun(), "failed");
  state.finish(begun(), "failed");
  clock.t += 10_000;
  const cancelled = begun();
  state.finish(cancelled, "excused");
  assert.equal(one().breaker, "half-open");
  const streaming = begun();
  state.answered(streaming);
  assert.equal(one().breaker, "closed");
  state.finish(streaming, "failed");
  assert.equal(one().consecutiveFailures, 1, "a stream breaking midway still counts");
});

Deno.test("server state: probes set health, discovery and the breaker", () => {
  const { state, one, begun } = setup();
  state.probed("a", { ok: true, version: "0.33.0", models: ["m1:latest", "qwen3:8b"], loaded: ["qwen3:8b"] });
  assert.equal(one().health, "up");
  assert.deepEqual(one().models, ["m1:latest", "qwen3:8b"]);
  assert.deepEqual(one().loadedModels, ["qwen3:8b"]);
  assert.equal(one().version, "0.33.0");
  assert.equal(state.isRoutable("a", "m1"), true, "m1 is m1:latest");
  assert.equal(state.isRoutable("a", "qwen3:8b"), true);
  assert.equal(state.isRoutable("a", "qwen3"), false, "qwen3 means qwen3:latest, which it lacks");
  assert.equal(state.isRoutable("a", "llama3"), false);

  state.probed("a", { ok: false, error: "connection refused", durationMs: 3 });
  assert.equal(one().health, "down");
  assert.equal(one().lastProbeError, "connection refused");
  assert.equal(one().breaker, "open");
  assert.equal(state.isRoutable("a", "m1"), false);
  assert.equal(state.begin("a"), undefined);

  state.probed("a", { ok: true, models: ["phi4"] });
  assert.equal(one().health, "up");
  assert.equal(one().lastProbeError, undefined);
  assert.equal(one().breaker, "half-open", "coming back up earns a trial at once");
  assert.equal(state.isRoutable("a", "phi4:latest"), true, "and the other way round");
  assert.equal(state.isRoutable("a", "m1"), false, "discovery replaced the old list");
  state.finish(begun(), "ok");
  assert.equal(one().breaker, "closed");

  state.probed("a", { ok: true });
  assert.equal(one().models, undefined, "a server that cannot list models is not held to a list");
  assert.equal(state.isRoutable("a", "anything"), true);
});

Deno.test("server state: a down server is refused even once its breaker would admit a trial", () => {
  const { clock, state, one } = setup();
  state.probed("a", { ok: false, error: "connection refused" });
  clock.t += 10_000;
  assert.equal(one("a").breaker, "half-open");
  assert.equal(state.isRoutable("a", "m1"), false);
  assert.equal(state.begin("a"), undefined);
});

Deno.test("server state: status is plain JSON", () => {
  const { clock, state } = setup();
  state.probed("b", { ok: true, models: ["m1"] });
  state.probed("a", { ok: false, error: "timed out" });
  const status = state.status();
  assert.deepEqual(status.map((s) => s.name), ["a", "b"]);
  assert.deepEqual(JSON.parse(JSON.stringify(status[1])), {
    name: "b",
    health: "up",
    breaker: "closed",
    consecutiveFailures: 0,
    inFlight: 0,
    requestsLastMinute: 0,
    errorsLastMinute: 0,
    latencySamples: 0,
    lastProbeAt: clock.t,
    models: ["m1"],
    reserved: 0,
    slots: 1,
    slotsSource: "learned",
  });
  status[1].models!.push("mutated");
  assert.deepEqual(state.status()[1].models, ["m1"], "status is a copy");
});

Deno.test("server state: listeners hear every change until they unsubscribe; a throwing one is contained", () => {
  const { state, begun } = setup();
  const heard: string[] = [];
  const unsubscribe = state.subscribe((name) => heard.push(name));
  const original = console.error;
  console.error = () => {};
  const unsubscribeBroken = state.subscribe(() => {
    throw new Error("broken feed");
  });
  try {
    const t = begun("a");
    state.answered(t);
    state.finish(t, "ok");
    state.probed("b", { ok: true });
  } finally {
    console.error = original;
    unsubscribeBroken();
  }
  assert.deepEqual(heard, ["a", "a", "a", "b"]);
  unsubscribe();
  state.probed("b", { ok: false });
  assert.equal(heard.length, 4);
});

Deno.test("server state: forget drops servers; their running requests finish quietly", () => {
  const { state, begun } = setup();
  const running = begun("a");
  state.probed("b", { ok: false, error: "x" });
  const heard: string[] = [];
  state.subscribe((name) => heard.push(name));
  state.forget(["b", "a", "never-known"]);
  assert.deepEqual(heard, ["b", "a"]);
  assert.deepEqual(state.names(), []);
  state.finish(running, "failed");
  assert.deepEqual(state.status(), []);
  assert.deepEqual(heard, ["b", "a"]);
  assert.equal(state.isRoutable("b", "m1"), true, "a forgotten server starts afresh");
});

Deno.test("server state: outcomeOf reads countsAgainstServer", () => {
  assert.equal(outcomeOf(new BackendFailure("down", true, true)), "failed");
  assert.equal(outcomeOf(new BackendFailure("no such model", true, false)), "excused");
  assert.equal(outcomeOf(new InvalidRequest("bad")), "excused");
  assert.equal(outcomeOf(new ImageNotSupported()), "excused");
  assert.equal(outcomeOf(new DOMException("client left", "AbortError")), "excused");
});

Deno.test("server state: canonicalModel adds :latest only where no tag is given", () => {
  assert.equal(canonicalModel("m1"), "m1:latest");
  assert.equal(canonicalModel("m1:latest"), "m1:latest");
  assert.equal(canonicalModel("qwen3:8b"), "qwen3:8b");
  assert.equal(canonicalModel("registry:5000/team/model"), "registry:5000/team/model:latest");
  assert.equal(canonicalModel("team/model:q4"), "team/model:q4");
});
