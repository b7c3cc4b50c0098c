import assert from "node:assert/strict";
import { CallAbort } from "./call_abort.ts";

Deno.test("a call's abort tells its one listener once, with the first reason, and its signal follows", () => {
  const stop = new CallAbort();
  const heard: unknown[] = [];
  stop.onAbort((reason) => heard.push(reason));
  const early = stop.signal;
  stop.abort("first");
  stop.abort("second");
  assert.deepEqual(heard, ["first"]);
  assert.equal(stop.reason, "first");
  assert.ok(early.aborted);
  assert.equal(early.reason, "first");
});

Deno.test("a listener or a signal that comes after the abort hears of it at once", () => {
  const stop = new CallAbort();
  stop.abort();
  assert.ok(stop.reason instanceof DOMException && stop.reason.name === "AbortError");
  let heard: unknown;
  stop.onAbort((reason) => heard = reason);
  assert.equal(heard, stop.reason);
  assert.ok(stop.signal.aborted);
});
