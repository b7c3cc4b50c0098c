import assert from "node:assert/strict";
import { ClientClosed, ShuttingDown } from "../errors.ts";
import type { ServerRecord } from "../store/records.ts";
import type { Candidate } from "./candidates.ts";
import { dispatch } from "./dispatch.ts";
import { type Route, Scheduler } from "./scheduler.ts";
import { ServerState, type Ticket } from "./server_state.ts";
import type { Priority } from "./wait_queue.ts";
import { type Cut, RequestCut, signalCut } from "../runtime/request_cut.ts";

/** One server with one slot, a scheduler in front of it, and a clock the test moves. */
function setup() {
  const clock = { t: 0 };
  const state = new ServerState({ now: () => clock.t });
  const scheduler = new Scheduler({
    state,
    now: () => clock.t,
    random: () => 0.5,
    priorityStepMs: 5_000,
    maxWaitMs: 1_000_000,
  });
  const server: ServerRecord = {
    name: "s",
    url: "http://s",
    kind: "ollama",
    models: [{ tag: "m1" }],
    weight: 1,
    enabled: true,
    slots: 1,
    createdAt: "",
    updatedAt: "",
  };
  const candidates = (): Candidate[] => [{ server, model: server.models[0] }];
  const served: string[] = [];
  let ticket: Ticket | undefined;
  /** Starts a request on its route as the pipeline does: failover over the route's candidates. */
  const begin = async (route: Route) => {
    const attempt = await dispatch("m1", route.candidates, state, () => Promise.resolve());
    route.served(attempt.candidate);
    return attempt.ticket;
  };
  /** Sends one request; once admitted it begins on its route, and its name is noted. */
  const send = async (name: string, priority: Priority) => {
    const route = await scheduler.place("m1", candidates(), [{ role: "user", content: name }], priority);
    ticket = await begin(route);
    served.push(name);
  };
  /** Ends the running request, so the next in line gets the slot. */
  const finish = async () => {
    state.finish(ticket!, "ok");
    await new Promise((r) => setTimeout(r, 0));
  };
  return { clock, state, scheduler, send, begin, finish, served, candidates };
}

Deno.test("wait queue: a freed slot goes to high, then normal, then low priority", async () => {
  const { clock, send, finish, served, scheduler } = setup();
  await send("running", "normal");
  clock.t = 0;
  send("low", "low");
  clock.t = 1_000;
  send("normal", "normal");
  clock.t = 2_000;
  send("high", "high");
  assert.deepEqual(scheduler.figures(), [{ model: "m1", depth: 3, oldestWaitMs: 2_000 }]);
  for (let i = 0; i < 3; i++) await finish();
  assert.deepEqual(served, ["running", "high", "normal", "low"]);
  scheduler.close();
});

Deno.test("wait queue: low priority is never starved: a high request overtakes it only by two priority steps", async () => {
  const { clock, send, finish, served, scheduler } = setup();
  await send("running", "normal");
  send("low", "low");
  clock.t = 9_000;
  send("high within 10 s", "high");
  clock.t = 11_000;
  send("high after 10 s", "high");
  send("normal after 10 s", "normal");
  for (let i = 0; i < 4; i++) await finish();
  assert.deepEqual(served, ["running", "high within 10 s", "low", "high after 10 s", "normal after 10 s"]);
  scheduler.close();
});

Deno.test("scheduler: a request goes straight to a free slot and holds it until it begins, so nobody takes it in between", async () => {
  const { state, scheduler, begin, candidates } = setup();
  const hello = [{ role: "user" as const, content: "hi" }];
  const first = await scheduler.place("m1", candidates(), hello);
  // Between being placed and beginning (the pipeline still has work to do), the slot is first's.
  let secondPlaced = false;
  const second = Promise.resolve(scheduler.place("m1", candidates(), hello)).then((route) => {
    secondPlaced = true;
    return route;
  });
  assert.equal(scheduler.figures()[0]?.depth, 1, "the slot is held: the second waits");
  const ticket = await begin(first);
  assert.ok(ticket, "the first begins where it was placed");
  await new Promise((r) => setTimeout(r, 0));
  assert.equal(secondPlaced, false, "and the second still waits while the first runs");
  state.finish(ticket, "ok");
  await begin(await second);
  assert.deepEqual(scheduler.figures(), []);
  scheduler.close();
});

Deno.test("scheduler: a wait ended by the stopping gateway says shutting_down, one the client ended says client_closed", async () => {
  const { send, scheduler, candidates } = setup();
  await send("running", "normal");
  const wait = (cut: Cut) =>
    Promise.resolve(scheduler.place("m1", candidates(), [{ role: "user", content: "x" }], "normal", cut))
      .catch((e) => e);
  // The drain's own cut, and the cut of a request that came with only its signal.
  const stopping = new RequestCut();
  const leaving = new AbortController();
  const ended = [wait(stopping), wait(signalCut(leaving.signal))];
  assert.equal(scheduler.figures()[0]?.depth, 2);
  stopping.abort(new ShuttingDown());
  leaving.abort();
  const [a, b] = await Promise.all(ended);
  assert.ok(a instanceof ShuttingDown);
  assert.ok(b instanceof ClientClosed);
  assert.deepEqual(scheduler.figures(), []);
  scheduler.close();
});

Deno.test("scheduler: a freed slot goes first to a conversation cached there, but a waiter overtaken twice goes next", async () => {
  const { state, scheduler, candidates, begin } = setup();
  const order: string[] = [];
  const turn1 = (c: string) => [{ role: "user" as const, content: `conversation ${c}` }];
  const turn2 = (c: string) => [
    ...turn1(c),
    { role: "assistant" as const, content: "an answer" },
    { role: "user" as const, content: "go on" },
  ];
  // Four conversations had their first turn served on "s".
  const cached = ["a", "b", "c", "d"];
  for (const c of cached) {
    state.finish(await begin(await scheduler.place("m1", candidates(), turn1(c))), "ok");
  }
  let running = await begin(await scheduler.place("m1", candidates(), turn1("first")));
  const send = async (name: string, messages: { role: "user" | "assistant"; content: string }[]) => {
    running = await begin(await scheduler.place("m1", candidates(), messages));
    order.push(name);
  };
  send("new", turn1("new"));
  for (const c of cached) send(`${c} again`, turn2(c));
  assert.equal(scheduler.figures()[0].depth, 5);
  for (let i = 0; i < 5; i++) {
    state.finish(running, "ok");
    await new Promise((r) => setTimeout(r, 0));
  }
  // As the README puts it: cached conversations go first, and a waiter overtaken twice that way goes next.
  assert.deepEqual(order, ["a again", "b again", "new", "c again", "d again"]);
  scheduler.close();
});
