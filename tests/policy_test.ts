/**
 * The policy stage through the real gateway: allow-lists, the per-minute rate limit and token quotas, with the
 * clock injected so period boundaries can be crossed on purpose. A burst against the rate limit, in one
 * process and in several, is tests/rpm_burst_test.ts.
 */
import assert from "node:assert/strict";
import { Scenario, USER_HELLO } from "./harness.ts";

const A = "/v1/chat/completions";
const B = "/api/v1/chat.php";

/** A clock the test moves by hand. */
function clock(iso: string) {
  let t = Date.parse(iso);
  return { now: () => t, set: (next: string) => t = Date.parse(next) };
}

async function status(res: Response) {
  await res.body?.cancel();
  return res.status;
}

Deno.test("a new minute restores the budget", async () => {
  const t = clock("2026-11-22T10:00:30Z");
  await using s = await Scenario.start([{ name: "a" }], { now: t.now });
  const secret = await s.gw.key({ rpm: 1 });
  assert.equal(await status(await s.gw.post(A, secret, { messages: USER_HELLO })), 200);
  assert.equal(await status(await s.gw.post(A, secret, { messages: USER_HELLO })), 429);
  t.set("2026-11-22T10:01:00Z");
  assert.equal(await status(await s.gw.post(A, secret, { messages: USER_HELLO })), 200);
});

/** Every answer costs 60 tokens. */
async function metered(now: () => number) {
  const s = await Scenario.start([{ name: "a" }], { now });
  s.fake().reply = () => ({ content: "fine", promptTokens: 25, completionTokens: 35 });
  return s;
}

Deno.test("daily quota: each request is asked for at most what the cap leaves; once used up, 429 until midnight UTC", async () => {
  const t = clock("2026-11-22T23:58:00Z");
  await using s = await metered(t.now);
  const secret = await s.gw.key({ dailyTokens: 100 });
  assert.equal(await status(await s.gw.post(A, secret, { messages: USER_HELLO })), 200);
  assert.equal(await status(await s.gw.post(B, secret, { messages: USER_HELLO })), 200, "60 < 100");
  // "hello there" is estimated at 10 prompt tokens; this fake bills 60 whatever it is asked for.
  const asked = s.fake().chats.map((c) => (c.body.options as { num_predict?: number }).num_predict);
  assert.deepEqual(asked, [90, 30], "the output ceiling is what the cap leaves beside the prompt");
  const refused = await s.gw.post(A, secret, { messages: USER_HELLO });
  assert.equal(refused.status, 429);
  const { error } = await refused.json();
  assert.equal(error.code, "quota_exceeded");
  assert.match(error.message, /Daily token quota of this API key is used up \(120 of 100 tokens\)/);
  assert.match(error.message, /resets at 2026-11-23T00:00:00.000Z/);
  assert.equal(refused.headers.get("retry-after"), "120");
  const b = await (await s.gw.post(B, secret, { messages: USER_HELLO })).json();
  assert.equal(b.error.type, "proxy_error");
  assert.equal(s.fake().chats.length, 2);

  t.set("2026-11-23T00:00:00Z");
  assert.equal(await status(await s.gw.post(A, secret, { messages: USER_HELLO })), 200, "a new day");
});

Deno.test("weekly quota resets on Monday 00:00 UTC, monthly on the 1st", async () => {
  const t = clock("2026-11-29T23:00:00Z"); // a Sunday, and not yet the month's end
  await using s = await metered(t.now);
  const weekly = await s.gw.key({ weeklyTokens: 60 });
  const monthly = await s.gw.key({ monthlyTokens: 60 });
  for (const secret of [weekly, monthly]) {
    assert.equal(await status(await s.gw.post(A, secret, { messages: USER_HELLO })), 200);
    assert.equal(await status(await s.gw.post(A, secret, { messages: USER_HELLO })), 429);
  }
  const weekMessage = (await (await s.gw.post(A, weekly, { messages: USER_HELLO })).json()).error.message;
  assert.match(weekMessage, /Weekly token quota .* resets at 2026-11-30T00:00:00.000Z/);
  t.set("2026-11-30T00:00:00Z"); // Monday: new week, same month
  assert.equal(await status(await s.gw.post(A, weekly, { messages: USER_HELLO })), 200);
  const monthMessage = (await (await s.gw.post(A, monthly, { messages: USER_HELLO })).json()).error.message;
  assert.match(monthMessage, /Monthly token quota .* resets at 2026-12-01T00:00:00.000Z/);
  t.set("2026-12-01T00:00:00Z");
  assert.equal(await status(await s.gw.post(A, monthly, { messages: USER_HELLO })), 200);
});

Deno.test("a user's quota is shared by its keys; the refusal names the cap that lifts last", async () => {
  const t = clock("2026-11-22T12:00:00Z");
  await using s = await metered(t.now);
  await s.gw.catalog.users.add({ name: "ana", dailyTokens: 100, monthlyTokens: 1000 });
  await s.gw.deps.view.refresh();
  const first = await s.gw.key({ user: "ana" });
  const second = await s.gw.key({ user: "ana", dailyTokens: 500 });
  const other = await s.gw.key({});
  assert.equal(await status(await s.gw.post(A, first, { messages: USER_HELLO })), 200);
  assert.equal(await status(await s.gw.post(A, second, { messages: USER_HELLO })), 200);
  for (const secret of [first, second]) {
    const { error } = await (await s.gw.post(A, secret, { messages: USER_HELLO })).json();
    assert.equal(error.code, "quota_exceeded");
    assert.match(error.message, /Daily token quota of user "ana" is used up \(120 of 100 tokens\)/);
  }
  assert.equal(
    await status(await s.gw.post(A, other, { messages: USER_HELLO })),
    200,
    "other owners unaffected",
  );

  // Reaching the monthly cap too: waiting for tomorrow would not help, so the monthly cap is named.
  await s.gw.catalog.users.update("ana", (user) => ({ ...user, monthlyTokens: 120 }));
  await s.gw.deps.view.refresh();
  const { error } = await (await s.gw.post(A, first, { messages: USER_HELLO })).json();
  assert.match(error.message, /Monthly token quota of user "ana" .* resets at 2026-12-01/);
});

Deno.test("tokens of a stream that broke midway count against the quota", async () => {
  const t = clock("2026-11-22T12:00:00Z");
  await using s = await metered(t.now);
  s.fake().reply = () => ({ content: "x".repeat(400) + " tail" });
  s.fake().streamFault = { after: 2, kind: "crash" };
  const secret = await s.gw.key({ dailyTokens: 50 });
  const res = await s.gw.post(A, secret, { messages: USER_HELLO, stream: true });
  assert.equal(res.status, 200);
  await res.text();
  const partial = s.gw.usage.at(-1)!;
  assert.equal(partial.status, "partial");
  assert.ok(partial.promptTokens + partial.completionTokens >= 50, "the estimate reached the cap");
  assert.equal(await status(await s.gw.post(A, secret, { messages: USER_HELLO })), 429);
});

Deno.test("IP allow-list: the peer address, or X-Forwarded-For from a trusted proxy only", async () => {
  await using direct = await Scenario.start();
  const local = await direct.gw.key({ allowIps: ["127.0.0.0/8"] });
  const lan = await direct.gw.key({ allowIps: ["10.0.0.0/8"] });
  assert.equal(await status(await direct.gw.post(A, local, { messages: USER_HELLO })), 200);
  const spoofed = await direct.gw.post(B, lan, { messages: USER_HELLO }, { "X-Forwarded-For": "10.1.2.3" });
  assert.equal(spoofed.status, 403, "the header is not believed from an untrusted peer");
  const { error } = await spoofed.json();
  assert.equal(error.type, "proxy_error");
  assert.match(error.message, /127\.0\.0\.1 are not allowed/);

  await using proxied = await Scenario.start([{ name: "a" }], { config: { trustProxy: ["127.0.0.1"] } });
  const v4 = await proxied.gw.key({ allowIps: ["10.0.0.0/8"] });
  const v6 = await proxied.gw.key({ allowIps: ["2001:db8::/32"] });
  const via = (secret: string, xff: string) =>
    proxied.gw.post(A, secret, { messages: USER_HELLO }, { "X-Forwarded-For": xff }).then(status);
  assert.equal(await via(v4, "10.1.2.3"), 200);
  assert.equal(await via(v4, "10.1.2.3, 127.0.0.1"), 200, "trusted hops are skipped");
  assert.equal(await via(v4, "11.0.0.1"), 403);
  assert.equal(await via(v4, "10.1.2.3, 11.0.0.1"), 403, "the right-most untrusted address decides");
  assert.equal(await via(v6, "2001:db8:1::7"), 200);
  assert.equal(await via(v6, "2001:db9::7"), 403);
  assert.equal(await via(v6, "garbage"), 403);
});

Deno.test("domain allow-list through the gateway, and refusals spend no rate-limit slot", async () => {
  await using s = await Scenario.start();
  const secret = await s.gw.key({ allowDomains: ["*.example.com"], rpm: 1 });
  for (let i = 0; i < 5; i++) {
    assert.equal(await status(await s.gw.post(A, secret, { messages: USER_HELLO })), 403, "no Origin");
    const evil = await s.gw.post(A, secret, { messages: USER_HELLO }, { Origin: "https://evil.com" });
    assert.equal(await status(evil), 403);
  }
  const good = await s.gw.post(B, secret, { messages: USER_HELLO }, { Origin: "https://app.example.com" });
  assert.equal(await status(good), 200, "the one slot is still there");
  const again = await s.gw.post(B, secret, { messages: USER_HELLO }, {
    Referer: "https://app.example.com/x",
  });
  assert.equal(await status(again), 429);
});
