/**
 * Token quotas and concurrency limits under concurrency, through real HTTP: many streams at once on a small
 * daily quota bill no more than the quota and one prompt estimate (what a backend's real prompt count may
 * exceed the estimate by), for a key and for a user over two keys; `--max-concurrent` refuses the request
 * beyond it in the client's own format. Across gateway processes: `quota_processes_test.ts`.
 */
import assert from "node:assert/strict";
import { readTotals } from "../lib/usage/mod.ts";
import { Scenario } from "./harness.ts";
import { ADMIN_TOKEN, formToken, logIn, postForm } from "./support/admin_session.ts";
import {
  A,
  assertServedOrRefused,
  B,
  billedOf,
  burst,
  LONG_ANSWER,
  OLLAMA,
  openStream,
  PATHS,
  PROMPT,
  streamed,
} from "./support/quota_streams.ts";
import { eventually } from "./support/wait_for.ts";

Deno.test("20 streams at once on a key's daily quota of 100: billed at most the quota and one prompt estimate", async () => {
  await using s = await Scenario.start();
  s.fake().reply = LONG_ANSWER;
  const secret = await s.gw.key({ dailyTokens: 100 });
  const answers = await burst([s.gw.url], [secret], 20);
  assertServedOrRefused(answers);
  await s.gw.ledger.flush();
  const billed = billedOf(s.gw.usage);
  const keyId = s.gw.usage[0].keyId!;
  assert.equal((await readTotals(s.gw.kv, "key", keyId, new Date())).day, billed, "the counter agrees");
  assert.ok(billed <= 100 + PROMPT, `billed ${billed}`);
  // Every answer that was served was asked for no more output than the quota left it.
  for (const chat of s.fake().chats) {
    const options = chat.body.options as { num_predict?: number };
    assert.ok(
      options.num_predict !== undefined && options.num_predict <= 100 - PROMPT,
      JSON.stringify(options),
    );
  }
  console.log(
    `key quota 100, one process: billed ${billed}, ${answers.filter((a) => a.status === 200).length} served`,
  );
});

Deno.test("20 streams at once over two keys of a user with a daily quota of 100: billed at most it and one prompt estimate", async () => {
  await using s = await Scenario.start();
  s.fake().reply = LONG_ANSWER;
  await s.gw.catalog.users.add({ name: "ana", dailyTokens: 100 });
  await s.gw.deps.view.refresh();
  const secrets = [await s.gw.key({ user: "ana" }), await s.gw.key({ user: "ana" })];
  const answers = await burst([s.gw.url], secrets, 20);
  assertServedOrRefused(answers);
  await s.gw.ledger.flush();
  const billed = billedOf(s.gw.usage);
  assert.equal((await readTotals(s.gw.kv, "user", "ana", new Date())).day, billed);
  assert.ok(billed <= 100 + PROMPT, `billed ${billed}`);
  console.log(`user quota 100, two keys, one process: billed ${billed}`);
});

Deno.test("--max-concurrent 2: the third request gets 429 concurrency_limit with Retry-After, in each client's format", async () => {
  await using s = await Scenario.start();
  s.fake().reply = LONG_ANSWER;
  s.fake().chunkDelayMs = 20;
  const secret = await s.gw.key({ maxConcurrent: 2 });
  const held = [await openStream(s.gw.url, A, secret), await openStream(s.gw.url, OLLAMA, secret)];

  const [a, b, ollama] = await Promise.all(PATHS.map((p) => streamed(s.gw.url, p, secret)));
  for (const refused of [a, b, ollama]) {
    assert.equal(refused.status, 429, refused.text);
    assert.equal(refused.retryAfter, "1");
  }
  const message = /This API key already has 2 request\(s\) in progress/;
  const bodyA = JSON.parse(a.text);
  assert.equal(bodyA.error.code, "concurrency_limit");
  assert.equal(bodyA.error.type, "rate_limit_error");
  assert.match(bodyA.error.message, message);
  const bodyB = JSON.parse(b.text);
  assert.deepEqual([bodyB.error.type, bodyB.error.code], ["proxy_error", "concurrency_limit"]);
  const bodyOllama = JSON.parse(ollama.text);
  assert.match(bodyOllama.error, message, "Ollama's clients show `error` as the message");
  assert.equal(bodyOllama.code, "concurrency_limit");
  assert.equal(s.fake().chats.length, 2, "refused requests never reach a backend");

  // A request that ends, here by its client leaving, gives its place back.
  await held[0].end();
  await eventually("the stream's record", () => s.gw.usage.some((r) => r.status === "partial"));
  const next = await openStream(s.gw.url, B, secret);
  assert.equal((await streamed(s.gw.url, A, secret)).status, 429);
  await Promise.all([held[1].end(), next.end()]);
  await eventually("both records", () => s.gw.usage.filter((r) => r.status === "partial").length === 3);
  const refusals = s.gw.usage.filter((r) => r.status === "rejected");
  assert.deepEqual(refusals.map((r) => r.errorCode), Array(4).fill("concurrency_limit"));
  const scraped = (await s.gw.deps.metrics!.scrape()).body;
  assert.match(scraped, /gateway_limit_refusals_total\{reason="concurrency_limit"\} 4/);
});

Deno.test("a user's --max-concurrent counts the requests of all its keys", async () => {
  await using s = await Scenario.start();
  s.fake().reply = LONG_ANSWER;
  s.fake().chunkDelayMs = 20;
  await s.gw.catalog.users.add({ name: "ana", maxConcurrent: 2 });
  await s.gw.deps.view.refresh();
  const [k1, k2] = [await s.gw.key({ user: "ana" }), await s.gw.key({ user: "ana", maxConcurrent: 5 })];
  const held = [await openStream(s.gw.url, A, k1), await openStream(s.gw.url, A, k2)];
  for (const secret of [k1, k2]) {
    const refused = await streamed(s.gw.url, A, secret);
    assert.equal(refused.status, 429);
    assert.match(JSON.parse(refused.text).error.message, /User "ana" already has 2 request\(s\) in progress/);
  }
  await Promise.all(held.map((h) => h.end()));
});

Deno.test("the console sets --max-concurrent on users and keys, and the limit applies at once", async () => {
  await using s = await Scenario.start([{ name: "gpu" }], { config: { adminToken: ADMIN_TOKEN } });
  s.fake("gpu").reply = LONG_ANSWER;
  s.fake("gpu").chunkDelayMs = 20;
  const { cookie } = await logIn(s.gw.url);
  const csrf = await formToken(s.gw.url, cookie);
  const user = await postForm(s.gw.url, "/admin/users", "user.add", cookie, [
    ["csrf", csrf],
    ["name", "ana"],
    ["max-concurrent", "1"],
  ]);
  assert.equal(user.kind, "done", user.text);
  const created = await postForm(s.gw.url, "/admin/keys", "key.create", cookie, [
    ["csrf", csrf],
    ["model", "m1"],
    ["user", "ana"],
    ["max-concurrent", "3"],
  ]);
  const secret = /value="(gwk_[^"]+)"/.exec(created.html)?.[1];
  assert.ok(secret, "the secret is on the answer page");
  // Each key is managed on a page of its own, linked from the Keys page.
  const keysPage = await (await fetch(`${s.gw.url}/admin/keys`, { headers: { Cookie: cookie } })).text();
  const keyPage = /href="(\/admin\/keys\?key=[^"]+)"/.exec(keysPage)?.[1];
  assert.ok(keyPage, "the Keys page links the key's own page");
  const managed = await (await fetch(`${s.gw.url}${keyPage}`, { headers: { Cookie: cookie } })).text();
  assert.match(managed, /name="max-concurrent"[^>]*value="3"|value="3"[^>]*name="max-concurrent"/);
  const usersPage = await (await fetch(`${s.gw.url}/admin/users`, { headers: { Cookie: cookie } })).text();
  assert.match(usersPage, /Max concurrent/);

  await s.gw.deps.view.refresh();
  const held = await openStream(s.gw.url, A, secret);
  const refused = await streamed(s.gw.url, A, secret);
  assert.equal(refused.status, 429);
  assert.match(JSON.parse(refused.text).error.message, /User "ana" already has 1 request/);
  await held.end();
});
