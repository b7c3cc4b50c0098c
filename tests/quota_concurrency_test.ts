/**
 * Token quotas and concurrency limits under concurrency, through real HTTP: many streams at once on a small
 * daily quota bill no more than the quota and one prompt estimate (what a backend's real prompt count may
 * exceed the estimate by), for a key and for a user over two keys; `--max-concurrent` refuses the request
 * beyond it in the client's own format; and both hold across two gateway processes on one store, including
 * one that dies while it holds requests.
 */
import assert from "node:assert/strict";
import { promptEstimate } from "../lib/policy/token_bounds.ts";
import { listUsage, readTotals } from "../lib/usage/mod.ts";
import type { UsageRecord } from "../lib/usage/types.ts";
import { FakeOllama } from "./fakes/fake_ollama.ts";
import { Scenario, USER_HELLO } from "./harness.ts";
import { ADMIN_TOKEN, formToken, logIn, postForm } from "./support/admin_session.ts";
import { admin, type GatewayProcess, startGateway } from "./support/processes.ts";

const A = "/v1/chat/completions";
const B = "/v1/chat.php";
const OLLAMA = "/api/chat";
const PATHS = [A, B, OLLAMA];

/** 5,000 tokens as the fake counts them, unless the request bounds its output. */
const LONG_ANSWER = () => ({ content: "tok ".repeat(5000) });

/** What the gateway estimates USER_HELLO's prompt at: the most a bill may exceed its quota by here. */
const PROMPT = promptEstimate({
  model: "m1",
  messages: USER_HELLO,
  stream: true,
  includeUsage: false,
  options: {},
});

interface Answer {
  status: number;
  retryAfter: string | null;
  text: string;
}

/** One streamed chat, read to its end. */
async function streamed(base: string, path: string, secret: string, extra: Record<string, unknown> = {}) {
  const res = await fetch(`${base}${path}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${secret}` },
    body: JSON.stringify({ model: "x", messages: USER_HELLO, stream: true, ...extra }),
  });
  return { status: res.status, retryAfter: res.headers.get("retry-after"), text: await res.text() };
}

/** A stream left open after its first chunk: a request in progress until `end()`. */
async function openStream(base: string, path: string, secret: string) {
  const res = await fetch(`${base}${path}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${secret}` },
    body: JSON.stringify({ model: "x", messages: USER_HELLO, stream: true }),
  });
  assert.equal(res.status, 200, await (res.status === 200 ? "" : res.text()));
  const reader = res.body!.getReader();
  assert.equal((await reader.read()).done, false);
  return { end: () => reader.cancel() };
}

/** Polls `check` until it holds; fails after `limitMs`. */
async function until(what: string, check: () => boolean | Promise<boolean>, limitMs = 15_000) {
  const start = performance.now();
  while (!await check()) {
    if (performance.now() - start > limitMs) throw new Error(`${what}: not within ${limitMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const billedOf = (records: UsageRecord[]) =>
  records.reduce((n, r) => n + r.promptTokens + r.completionTokens, 0);

/** Streams at once, cycling over the paths and the secrets given; half ask for at most 20 tokens. */
function burst(bases: string[], secrets: string[], n: number): Promise<Answer[]> {
  return Promise.all(Array.from({ length: n }, (_, i) =>
    streamed(
      bases[i % bases.length],
      PATHS[i % PATHS.length],
      secrets[i % secrets.length],
      i % 2 ? {} : { max_tokens: 20 },
    )));
}

/** Every answer is a whole stream (200) or the quota's refusal in its client's format. */
function assertServedOrRefused(answers: Answer[]): void {
  answers.forEach((a, i) => {
    if (a.status === 200) return;
    assert.equal(a.status, 429, a.text);
    const body = JSON.parse(a.text);
    const code = PATHS[i % PATHS.length] === OLLAMA ? body.code : body.error.code;
    assert.equal(code, "quota_exceeded", a.text);
    assert.ok(Number(a.retryAfter) >= 1, `Retry-After ${a.retryAfter}`);
  });
  assert.ok(answers.some((a) => a.status === 200), "some were served");
  assert.ok(answers.some((a) => a.status === 429), "some were refused");
}

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
  await until("the stream's record", () => s.gw.usage.some((r) => r.status === "partial"));
  const next = await openStream(s.gw.url, B, secret);
  assert.equal((await streamed(s.gw.url, A, secret)).status, 429);
  await Promise.all([held[1].end(), next.end()]);
  await until("both records", () => s.gw.usage.filter((r) => r.status === "partial").length === 3);
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
  const keysPage = await (await fetch(`${s.gw.url}/admin/keys`, { headers: { Cookie: cookie } })).text();
  assert.match(keysPage, /name="max-concurrent"[^>]*value="3"|value="3"[^>]*name="max-concurrent"/);
  const usersPage = await (await fetch(`${s.gw.url}/admin/users`, { headers: { Cookie: cookie } })).text();
  assert.match(usersPage, /Max concurrent/);

  await s.gw.deps.view.refresh();
  const held = await openStream(s.gw.url, A, secret);
  const refused = await streamed(s.gw.url, A, secret);
  assert.equal(refused.status, 429);
  assert.match(JSON.parse(refused.text).error.message, /User "ana" already has 1 request/);
  await held.end();
});

/** Two gateway processes on one store file, with one fake backend of long answers. */
async function twoGateways(
  env: Record<string, string>,
  fn: (ctx: {
    gateways: GatewayProcess[];
    env: Record<string, string>;
    fake: FakeOllama;
    kill: (g: GatewayProcess) => Promise<void>;
  }) => Promise<void>,
) {
  const dir = await Deno.makeTempDir();
  const fake = FakeOllama.start("shared");
  fake.reply = LONG_ANSWER;
  const store = { GATEWAY_KV: `${dir}/store.kv`, ...env };
  const gateways: GatewayProcess[] = [];
  const killed = new Set<GatewayProcess>();
  const kill = async (g: GatewayProcess) => {
    killed.add(g);
    g.child.kill("SIGKILL");
    await g.child.status;
  };
  try {
    await admin(store, "server", "add", "--name", "gpu1", "--url", fake.url, "--model", "m1");
    // Run directly, not through `deno task`, so the process a test kills is the gateway itself.
    const args = ["run", "--allow-net", "--allow-env", "--allow-read", "--allow-write", "main.ts"];
    gateways.push(...await Promise.all([startGateway(store, args), startGateway(store, args)]));
    await fn({ gateways, env: store, fake, kill });
  } finally {
    await Promise.all(gateways.filter((g) => !killed.has(g)).map((g) => g.stop()));
    await fake.close();
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("two gateways on one store: 20 streams at once on a key's and on a user's daily quota of 100 bill at most it and one prompt estimate", async () => {
  await twoGateways({}, async ({ gateways, env }) => {
    const key = await admin(env, "key", "create", "--model", "m1", "--daily-tokens", "100");
    await admin(env, "user", "add", "--name", "ana", "--daily-tokens", "100");
    const ofAna = [
      await admin(env, "key", "create", "--model", "m1", "--user", "ana"),
      await admin(env, "key", "create", "--model", "m1", "--user", "ana"),
    ];
    const urls = gateways.map((g) => g.url);
    assertServedOrRefused(await burst(urls, [key.key], 20));
    assertServedOrRefused(await burst(urls, ofAna.map((k) => k.key), 20));
    // SIGTERM flushes each ledger; then the store holds every record and every token.
    assert.deepEqual((await Promise.all(gateways.map((g) => g.stop()))).map((s) => s.code), [0, 0]);
    const kv = await Deno.openKv(env.GATEWAY_KV);
    try {
      const now = new Date();
      const keyBilled = billedOf(await listUsage(kv, { keyId: key.id, limit: 1000 }));
      const userBilled = billedOf(await listUsage(kv, { user: "ana", limit: 1000 }));
      assert.equal((await readTotals(kv, "key", key.id, now)).day, keyBilled);
      assert.equal((await readTotals(kv, "user", "ana", now)).day, userBilled);
      assert.ok(keyBilled <= 100 + PROMPT, `key billed ${keyBilled}`);
      assert.ok(userBilled <= 100 + PROMPT, `user billed ${userBilled}`);
      assert.equal(
        (await kv.list({ prefix: ["holds"] }).next()).done,
        true,
        "stopping gateways hold nothing",
      );
      console.log(`two processes, quota 100: key billed ${keyBilled}, user (two keys) billed ${userBilled}`);
    } finally {
      kv.close();
    }
  });
});

Deno.test("two gateways on one store: --max-concurrent 2 refuses the third, and a gateway that dies gives its places back after the lease", async () => {
  await twoGateways({ GATEWAY_HOLD_LEASE_MS: "1500" }, async ({ gateways: [a, b], env, fake, kill }) => {
    fake.chunkDelayMs = 20;
    const { key, id } = await admin(env, "key", "create", "--model", "m1", "--max-concurrent", "2");
    const held = [await openStream(a.url, A, key), await openStream(b.url, B, key)];
    for (const g of [a, b]) {
      const refused = await streamed(g.url, OLLAMA, key);
      assert.equal(refused.status, 429, refused.text);
      assert.equal(JSON.parse(refused.text).code, "concurrency_limit");
      assert.equal(refused.retryAfter, "1");
    }
    // Ended on b: a may admit once b published the place it gave back.
    await held[1].end();
    let third: { end: () => Promise<void> } | undefined;
    await until("a place given back on the other gateway", async () => {
      const res = await fetch(`${a.url}${A}`, {
        method: "POST",
        headers: { "Content-Type": "application/json", Authorization: `Bearer ${key}` },
        body: JSON.stringify({ model: "x", messages: USER_HELLO, stream: true }),
      });
      if (res.status !== 200) {
        await res.body?.cancel();
        return false;
      }
      const reader = res.body!.getReader();
      await reader.read();
      third = { end: () => reader.cancel() };
      return true;
    });
    // a dies holding both places; b admits again only once a's lease ran out.
    await kill(a);
    const killedAt = performance.now();
    await Promise.all([held[0].end(), third!.end()].map((p) => p.catch(() => {})));
    const kv = await Deno.openKv(env.GATEWAY_KV);
    try {
      const shares = Object.values(
        (await kv.get<Record<string, { inflight: number }>>(["holds", "key", id])).value!,
      );
      assert.deepEqual(
        shares.map((share) => share.inflight),
        [2],
        "what the dead gateway held is still in the store",
      );
    } finally {
      kv.close();
    }
    await until("the dead gateway's lease lapsing", async () => {
      const res = await fetch(`${b.url}${A}`, {
        method: "POST",
        headers: { "Content-Type": "application/json", Authorization: `Bearer ${key}` },
        body: JSON.stringify({ model: "x", messages: USER_HELLO, max_tokens: 3 }),
      });
      await res.body?.cancel();
      return res.status === 200;
    });
    console.log(
      `a dead gateway's places came back ${Math.round(performance.now() - killedAt)} ms after it died`,
    );
  });
});
