import assert from "node:assert/strict";
import { BodyBudget } from "./body_budget.ts";
import { BodyMemoryFull } from "../errors.ts";
import { loadConfig } from "../config.ts";
import { within as settles } from "../../tests/support/wait_for.ts";

/** `promise`, failing if it takes over 10 s: its timer also keeps the test alive while a deadline runs. */
const within = <T>(promise: Promise<T>) => settles("the awaited step", promise, 10_000);

Deno.test("what fits is counted at once; what does not waits until memory is given back", async () => {
  const budget = new BodyBudget(100, 60_000);
  assert.equal(budget.take(60), undefined);
  assert.equal(budget.take(40), undefined);
  const waiting = budget.take(30);
  assert.ok(waiting instanceof Promise);
  assert.equal(budget.waiting, 1);
  budget.give(60);
  await within(waiting);
  assert.equal(budget.used, 70);
  assert.equal(budget.waiting, 0);
});

Deno.test("waiters are served in turn: a large one is not passed over by smaller ones behind it", async () => {
  const budget = new BodyBudget(100, 60_000);
  budget.take(90);
  const served: string[] = [];
  const large = budget.take(80)!.then(() => served.push("large"));
  // Would fit now (90 + 10), but comes after the large one.
  const small = budget.take(10)!.then(() => served.push("small"));
  assert.equal(budget.waiting, 2);
  budget.give(90);
  await within(Promise.all([large, small]));
  assert.deepEqual(served, ["large", "small"]);
  assert.equal(budget.used, 90);
});

Deno.test("a waiter that does not fit within the wait is refused with 503 and Retry-After; the next one still waits", async () => {
  const budget = new BodyBudget(100, 50);
  budget.take(100);
  const refused = await within(budget.take(100)!.then(() => undefined, (error) => error));
  assert.ok(refused instanceof BodyMemoryFull);
  assert.equal(refused.status, 503);
  assert.equal(refused.code, "body_memory_full");
  assert.deepEqual(refused.headers(), { "Retry-After": "1", Connection: "close" });
  assert.equal(budget.waiting, 0);
  assert.equal(budget.used, 100, "a refused waiter counts nothing");
  // One that does not fit now but is let in before its wait ends.
  const later = budget.take(50)!;
  budget.give(100);
  await within(later);
  assert.equal(budget.used, 50);
});

Deno.test("a refused waiter at the head lets the ones behind it in when they fit", async () => {
  const budget = new BodyBudget(100, 50);
  budget.take(60);
  const head = budget.take(100)!.then(() => "served", () => "refused");
  const behind = budget.take(40)!.then(() => "served", () => "refused");
  // The head can never fit while 60 are held; once it is refused, the 40 behind it do fit.
  assert.deepEqual(await within(Promise.all([head, behind])), ["refused", "served"]);
  assert.equal(budget.used, 100);
});

Deno.test("the budget's setting: 256 MiB unset, room for two largest bodies at least, refused below one", () => {
  const MiB = 1024 * 1024;
  assert.equal(loadConfig({}).bodyMemoryBytes, 256 * MiB);
  assert.equal(loadConfig({ GATEWAY_MAX_BODY_BYTES: String(100 * MiB) }).bodyMemoryBytes, 2 * 6 * 100 * MiB);
  assert.equal(loadConfig({ GATEWAY_BODY_MEMORY_BYTES: String(120 * MiB) }).bodyMemoryBytes, 120 * MiB);
  assert.throws(
    () => loadConfig({ GATEWAY_BODY_MEMORY_BYTES: String(100 * MiB) }),
    /GATEWAY_BODY_MEMORY_BYTES: at least 125829120/,
  );
});
