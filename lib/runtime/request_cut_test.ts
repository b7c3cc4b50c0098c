import assert from "node:assert/strict";
import { type Cut, RequestCut, signalCut } from "./request_cut.ts";

/** Both kinds of cut, each with the way to make it abort with `reason`. */
function cuts(): [string, Cut, (reason: unknown) => void][] {
  const own = new RequestCut();
  const controller = new AbortController();
  return [
    ["the drain's cut", own, (reason) => own.abort(reason)],
    ["a request signal's cut", signalCut(controller.signal), (reason) => controller.abort(reason)],
  ];
}

Deno.test("a cut calls each listener once with its reason, and none it was told to forget", () => {
  for (const [name, cut, abort] of cuts()) {
    const heard: string[] = [];
    const first = (reason: unknown) => heard.push(`first ${reason}`);
    const second = (reason: unknown) => heard.push(`second ${reason}`);
    const forgotten = (reason: unknown) => heard.push(`forgotten ${reason}`);
    const third = (reason: unknown) => heard.push(`third ${reason}`);
    cut.listen(first);
    cut.listen(forgotten);
    cut.listen(second);
    cut.forget(forgotten);
    cut.listen(third);
    cut.forget(first);
    cut.listen(first);
    assert.equal(cut.aborted, false, name);
    abort("gone");
    abort("again");
    assert.equal(cut.aborted, true, name);
    assert.equal(cut.reason, "gone", name);
    assert.deepEqual(heard.sort(), ["first gone", "second gone", "third gone"], name);
  }
});

Deno.test("a listener of a cut already made is called at once; forgetting what was never listened to is harmless", () => {
  for (const [name, cut, abort] of cuts()) {
    cut.forget(() => {});
    abort("left");
    let heard: unknown;
    cut.listen((reason) => heard = reason);
    assert.equal(heard, "left", name);
  }
  const made = RequestCut.made("stopped");
  assert.equal(made.aborted, true);
  assert.equal(made.reason, "stopped");
});

Deno.test("a cut's standard signal aborts with it, whether asked for before or after", () => {
  const before = new RequestCut();
  const early = before.signal;
  assert.equal(before.signal, early, "made once");
  assert.equal(early.aborted, false);
  before.abort("left");
  assert.equal(early.aborted, true);
  assert.equal(early.reason, "left");

  const after = RequestCut.made("stopped");
  assert.equal(after.signal.aborted, true);
  assert.equal(after.signal.reason, "stopped");
});

Deno.test("a listener that throws does not keep the others or the signal from hearing the cut", () => {
  const cut = new RequestCut();
  const signal = cut.signal;
  const heard: string[] = [];
  const reported: unknown[] = [];
  const log = console.error;
  console.error = (...args: unknown[]) => reported.push(args[1]);
  try {
    cut.listen(() => {
      throw new Error("broken listener");
    });
    cut.listen((reason) => heard.push(String(reason)));
    cut.abort("stopping");
  } finally {
    console.error = log;
  }
  assert.deepEqual(heard, ["stopping"]);
  assert.equal(signal.aborted, true);
  assert.equal((reported[0] as Error).message, "broken listener");
});
