/**
 * Fairness between tenants in the wait queue, through real HTTP on a server with `--slots 2`: one key's burst
 * neither takes every freed slot nor fills the queue against another key, and keys that always have requests
 * waiting share the slots evenly however many each sends at once.
 */
import assert from "node:assert/strict";
import { Scenario } from "./harness.ts";
import { eventually, within } from "./support/wait_for.ts";

const A = "/v1/chat/completions";
const ask = (who: string) => [{ role: "user", content: `from ${who}` }];
const senderOf = (body: Record<string, unknown>) =>
  ((body.messages as { content: string }[]).at(-1)?.content ?? "").replace("from ", "");

Deno.test("fair queue: a second key is served at the next freed slot, ahead of another key's burst", async () => {
  await using s = await Scenario.start([{ name: "a", slots: 2 }], { config: { queueMax: 100 } });
  const fake = s.fake("a");
  const burst = await s.gw.key();
  const other = await s.gw.key();
  // Two long streams hold both slots until their clients leave.
  fake.chunkDelayMs = 20;
  fake.reply = () => ({ content: "word ".repeat(5_000) });
  const holders = await Promise.all([0, 1].map(async (i) => {
    const res = await s.gw.post(A, burst, { messages: ask(`holder${i}`), stream: true });
    const reader = res.body!.getReader();
    await reader.read();
    return reader;
  }));
  const waiting = Array.from({ length: 100 }, (_, i) => s.gw.post(A, burst, { messages: ask(`burst${i}`) }));
  await eventually("the burst waits", () => s.gw.deps.scheduler.figures()[0]?.depth === 100);
  const second = s.gw.post(A, other, { messages: ask("other") });
  // The full queue made room for the other key by refusing the burst's newest request.
  const refused = await within(
    "a refusal of the burst's newest request",
    Promise.race(waiting.map(async (p) => (await p).status === 429 ? await p : never())),
  );
  assert.equal(refused.status, 429);
  assert.equal((await refused.json()).error.code, "queue_full");
  const before = fake.chats.length;
  await holders[0].cancel();
  assert.equal((await second).status, 200);
  assert.equal(senderOf(fake.chats[before].body), "other", "the freed slot went to the other key");
  await holders[1].cancel();
  const statuses = await Promise.all(waiting.map(async (p) => (await p).status));
  assert.equal(statuses.filter((code) => code === 200).length, 99);
});

function never(): Promise<never> {
  return new Promise(() => {});
}

Deno.test("fair queue: four keys always waiting share 400 slot grants evenly, one sending five times as many at once", async () => {
  await using s = await Scenario.start([{ name: "a", slots: 2 }], { config: { queueMax: 1_000 } });
  const fake = s.fake("a");
  fake.chunkDelayMs = 2;
  fake.reply = () => ({ content: "a short answer" });
  const keys = await Promise.all([0, 1, 2, 3].map(() => s.gw.key()));
  const parallel = [10, 2, 2, 2];
  let granted = 0;
  await Promise.all(keys.flatMap((key, k) =>
    Array.from({ length: parallel[k] }, async () => {
      while (granted < 400) {
        granted++;
        const res = await s.gw.post(A, key, { messages: ask(`k${k}`), stream: true });
        assert.equal(res.status, 200);
        await res.text();
      }
    })
  ));
  // The first grants went before anyone waited; count from the first 400 the server received.
  const served = fake.chats.slice(0, 400).map((c) => senderOf(c.body));
  for (let k = 0; k < 4; k++) {
    const share = served.filter((who) => who === `k${k}`).length / 400;
    assert.ok(Math.abs(share - 0.25) <= 0.05, `key ${k} got ${(share * 100).toFixed(1)}% of the slots`);
  }
});

Deno.test("fair queue: a tenant still at work keeps its share of the slots free beside another's burst", async () => {
  await using s = await Scenario.start([{ name: "a", slots: 2 }]);
  const fake = s.fake("a");
  const steady = await s.gw.key();
  const bursty = await s.gw.key();
  const first = await s.gw.post(A, steady, { messages: ask("steady") });
  assert.equal(first.status, 200);
  await first.text();
  // The burst holds its slots with long answers; the steady key's next question comes while they run.
  fake.chunkDelayMs = 20;
  fake.reply = (body) => ({ content: senderOf(body) === "steady" ? "short" : "word ".repeat(200) });
  const burst = Array.from(
    { length: 6 },
    () => s.gw.post(A, bursty, { messages: ask("bursty"), stream: true }),
  );
  await eventually("the burst waits for slots", () => (s.gw.deps.scheduler.figures()[0]?.depth ?? 0) >= 5);
  assert.equal(
    fake.chats.filter((c) => senderOf(c.body) === "bursty").length,
    1,
    "the burst took one slot of two",
  );
  const next = await s.gw.post(A, steady, { messages: ask("steady") });
  assert.equal(next.status, 200);
  await next.text();
  // Its answer came while the burst's first stream was still running: it did not wait for a slot to free.
  assert.equal(fake.streamsCompleted + fake.streamsCancelled, 0, "it started before any slot turned over");
  await Promise.all(burst.map(async (res) => await (await res).body?.cancel()));
});
