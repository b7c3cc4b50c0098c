import assert from "node:assert/strict";
import { StoreLink, StoreUnreachable } from "./link.ts";

function link(remote = true) {
  const changes: string[] = [];
  return {
    link: new StoreLink({ remote, timeoutMs: 30, onChange: (state) => changes.push(state) }),
    changes,
  };
}

Deno.test("on a network store an operation not answered in time is given up, the store is down, and later ones fail at once until a probe is answered", async () => {
  const { link: l, changes } = link();
  assert.equal(await l.bound(Promise.resolve(7)), 7);
  const never = Promise.withResolvers<number>();
  await assert.rejects(l.bound(never.promise), StoreUnreachable);
  assert.deepEqual([l.up, l.status().state, l.status().outages, changes], [false, "down", 1, ["down"]]);
  assert.ok(l.status().downSince);

  let started = false;
  await assert.rejects(l.attempt(() => (started = true, Promise.resolve(1))), StoreUnreachable);
  assert.equal(started, false, "nothing is started while the store is down");
  await assert.rejects(l.bound(Promise.resolve(1)), StoreUnreachable);

  // The probe waits however long the store takes; its answer brings the store back.
  const answer = Promise.withResolvers<string>();
  const probing = l.probe(() => answer.promise);
  const back = l.whenUp();
  answer.resolve("generation");
  assert.equal(await probing, "generation");
  await back;
  assert.deepEqual([l.up, changes], [true, ["down", "up"]]);
  assert.equal(typeof l.status().roundTripMs, "number");
});

Deno.test("a probe past the limit marks the store down while it still waits", async () => {
  const { link: l } = link();
  const answer = Promise.withResolvers<number>();
  const probing = l.probe(() => answer.promise);
  await new Promise((resolve) => setTimeout(resolve, 60));
  assert.equal(l.up, false);
  answer.resolve(1);
  await probing;
  assert.equal(l.up, true);
  assert.equal(l.status().roundTripMs, undefined, "a probe that outlived the limit is no round-trip figure");
});

Deno.test("a local store's operations are neither raced nor wrapped", async () => {
  const { link: l } = link(false);
  const op = new Promise<number>(() => {});
  assert.equal(l.bound(op), op);
  await assert.rejects(l.probe(() => Promise.reject(new Error("disk"))), /disk/);
  assert.equal(l.up, true, "a local store is not taken for down");
});
