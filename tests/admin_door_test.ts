/**
 * The admin door: wrong admin tokens are slowed per client address, counted in /metrics, logged and audited
 * without flooding the trail; a short admin token stops the start; logging out ends a session in the store, on
 * every gateway sharing it; the trail says that a server's API key changed without its value and records no
 * change that changes nothing; the page's and the API's actor is the client behind a trusted proxy.
 */
import assert from "node:assert/strict";
import parsePrometheusTextFormat from "parse-prometheus-text-format";
import { defaultConfig, loadConfig } from "../lib/config.ts";
import { Gateway } from "../lib/gateway.ts";
import { type AuditRecord, listAudit } from "../lib/audit/mod.ts";
import { closeAdminServices } from "../lib/admin_web/services.ts";
import { Scenario } from "./harness.ts";
import { ADMIN_TOKEN, FeedReader, formToken, logIn, postForm } from "./support/admin_session.ts";

const root = new URL("..", import.meta.url).pathname;
const BEARER = { Authorization: `Bearer ${ADMIN_TOKEN}` };

/** Lines the gateway writes with `console.error` while `work` runs. */
async function errorLines(work: () => Promise<void>): Promise<string[]> {
  const lines: string[] = [];
  const original = console.error;
  console.error = (...args: unknown[]) => lines.push(args.map(String).join(" "));
  try {
    await work();
  } finally {
    console.error = original;
  }
  return lines;
}

async function status(url: string, headers: Record<string, string>) {
  const response = await fetch(url, { headers });
  const body = await response.text();
  return { status: response.status, retryAfter: response.headers.get("retry-after"), body };
}

interface Family {
  name: string;
  metrics: { labels?: Record<string, string>; value?: string }[];
}

function failureCounts(metricsText: string): Record<string, number> {
  const families = parsePrometheusTextFormat(metricsText) as Family[];
  const out: Record<string, number> = {};
  for (const m of families.find((f) => f.name === "gateway_admin_auth_failures_total")?.metrics ?? []) {
    out[`${m.labels?.via} ${m.labels?.reason}`] = Number(m.value);
  }
  return out;
}

const loginFailures = (records: AuditRecord[]) => records.filter((r) => r.action === "admin.login_failed");

Deno.test("wrong admin tokens are slowed per address with 429 and Retry-After, counted, logged once and audited once a minute", async () => {
  let clock = Date.parse("2026-11-25T10:00:00Z");
  await using s = await Scenario.start([{ name: "a" }], {
    config: { adminToken: ADMIN_TOKEN, trustProxy: ["127.0.0.1"] },
    now: () => clock,
  });
  const statusUrl = `${s.gw.url}/admin/status`;
  const guesser = { "X-Forwarded-For": "203.0.113.9" };
  const other = { "X-Forwarded-For": "198.51.100.4" };
  const answers: { status: number; retryAfter: string | null }[] = [];
  const lines = await errorLines(async () => {
    for (let i = 0; i < 40; i++) {
      answers.push(await status(statusUrl, { ...guesser, Authorization: `Bearer guess-number-${i}` }));
    }
  });
  assert.deepEqual(
    answers.slice(0, 5).map((a) => a.status),
    [401, 401, 401, 401, 401],
    "four free, the fifth waits",
  );
  for (const a of answers.slice(5)) assert.deepEqual([a.status, a.retryAfter], [429, "1"]);
  const blocked = await status(statusUrl, { ...guesser, ...BEARER });
  assert.equal(blocked.status, 429, "while the address waits even the right token is not checked");
  assert.equal(JSON.parse(blocked.body).error.code, "admin_throttled");
  assert.equal(
    (await status(statusUrl, { ...other, ...BEARER })).status,
    200,
    "another address is not slowed",
  );
  clock += 1_000;
  assert.equal(
    (await status(statusUrl, { ...guesser, ...BEARER })).status,
    200,
    "after the wait the token works",
  );

  // The form is slowed the same way, and answers with the login form.
  const formGuesser = { "X-Forwarded-For": "198.51.100.77" };
  for (let i = 0; i < 5; i++) {
    assert.equal((await logIn(s.gw.url, `wrong-form-token-${i}`, formGuesser)).response.status, 401);
  }
  const slowed = await fetch(`${s.gw.url}/admin/login`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", ...formGuesser },
    body: new URLSearchParams({ token: ADMIN_TOKEN }),
    redirect: "manual",
  });
  assert.equal(slowed.status, 429);
  assert.equal(slowed.headers.get("retry-after"), "1");
  assert.equal(slowed.headers.get("set-cookie"), null);
  assert.match(await slowed.text(), /try again in 1 s/);

  // An IPv6 client counts as its /64, however many of its addresses it uses.
  for (const host of ["1", "2", "3"]) {
    const v6 = { "X-Forwarded-For": `2001:db8:1:2::${host}`, Authorization: "Bearer guess-number-v6" };
    assert.equal((await status(statusUrl, v6)).status, 401);
  }

  const metrics = await fetch(`${s.gw.url}/metrics`, { headers: { ...other, ...BEARER } });
  assert.deepEqual(failureCounts(await metrics.text()), {
    "bearer wrong_token": 8,
    "bearer throttled": 36,
    "form wrong_token": 5,
    "form throttled": 1,
  });

  const bearerLines = lines.filter((line) => line.includes("203.0.113.9"));
  assert.equal(bearerLines.length, 1, "one line for the flood's minute so far");
  assert.match(bearerLines[0], /authentication failed \(bearer\) from 203\.0\.113\.9/);
  assert.ok(!lines.join("\n").includes("guess-number"), "no tried value is logged");

  const firstWritten = loginFailures(await listAudit(s.gw.kv));
  assert.deepEqual(firstWritten.map((r) => [r.actor, r.changes.failures]), [
    [{ kind: "api", address: "2001:db8:1:2::/64" }, { after: 1 }],
    [{ kind: "page", address: "198.51.100.77" }, { after: 1 }],
    [{ kind: "api", address: "203.0.113.9" }, { after: 1 }],
  ]);
  // The minute's counts are written when it is over, or when the gateway stops: here, as it stops.
  const summary = await errorLines(() => closeAdminServices(s.gw.deps));
  const final = loginFailures(await listAudit(s.gw.kv));
  assert.deepEqual(final.map((r) => [r.id, r.actor.address, r.changes]), [
    [firstWritten[0].id, "2001:db8:1:2::/64", { failures: { after: 3 } }],
    [firstWritten[1].id, "198.51.100.77", { failures: { after: 5 }, throttled: { after: 1 } }],
    [firstWritten[2].id, "203.0.113.9", { failures: { after: 5 }, throttled: { after: 36 } }],
  ]);
  assert.ok(summary.some((line) => /5 failed and 36 throttled .* \(bearer\) from 203\.0\.113\.9/.test(line)));
  const trail = JSON.stringify(await listAudit(s.gw.kv));
  assert.ok(
    !trail.includes("guess-number") && !trail.includes("wrong-form-token") && !trail.includes(ADMIN_TOKEN),
  );
});

Deno.test("an admin token shorter than 16 characters stops the start with one line and exit status 1", async () => {
  assert.throws(
    () => loadConfig({ GATEWAY_ADMIN_TOKEN: "x" }),
    /GATEWAY_ADMIN_TOKEN.*at least 16 characters/,
  );
  assert.throws(() => loadConfig({ GATEWAY_ADMIN_TOKEN: " padded-admin-token-0123 " }), /white space/);
  assert.equal(loadConfig({ GATEWAY_ADMIN_TOKEN: "0123456789abcdef" }).adminToken, "0123456789abcdef");

  const dir = await Deno.makeTempDir();
  try {
    // deno task start, and deno task start:parallel.
    for (const entry of ["main.ts", "parallel.ts"]) {
      const run = await new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", entry],
        cwd: root,
        env: { GATEWAY_ADMIN_TOKEN: "short-token-15c", GATEWAY_KV: `${dir}/store.kv`, PORT: "0" },
        stdout: "piped",
        stderr: "piped",
      }).output();
      const stderr = new TextDecoder().decode(run.stderr);
      assert.equal(run.code, 1, entry);
      const lines = stderr.split("\n").filter((line) => line.trim() !== "");
      assert.equal(lines.length, 1, `${entry}: ${stderr}`);
      assert.match(lines[0], /GATEWAY_ADMIN_TOKEN.*at least 16 characters/);
      assert.ok(!stderr.includes("short-token-15c"), "the token is not shown");
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("logging out ends the session in the store: its cookie and its open feed end, on this gateway and on another sharing the store", async () => {
  const kv = await Deno.openKv(":memory:");
  const config = defaultConfig({ host: "127.0.0.1", port: 0, adminToken: ADMIN_TOKEN, reloadIntervalMs: 50 });
  const gateways = [
    await Gateway.open(config, { kv, probe: false }),
    await Gateway.open(config, { kv, probe: false }),
  ];
  const feeds: FeedReader[] = [];
  try {
    const [a, b] = gateways.map((g) => `http://127.0.0.1:${g.listen().addr.port}`);
    const { cookie } = await logIn(a);
    const csrf = await formToken(a, cookie);
    for (const base of [a, b]) {
      assert.equal(
        (await status(`${base}/admin/status`, { Cookie: cookie })).status,
        200,
        "one session for both",
      );
    }
    const feed = await FeedReader.open(a, { Cookie: cookie });
    feeds.push(feed);
    await feed.next((e) => e.event === "health");
    const out = await fetch(`${b}/admin/logout`, {
      method: "POST",
      headers: { Cookie: cookie, Origin: b },
      redirect: "manual",
    });
    await out.body?.cancel();
    assert.equal(out.status, 303);
    assert.match(out.headers.get("set-cookie") ?? "", /^gw_admin=; Max-Age=0/);
    for (const base of [a, b]) {
      assert.equal(
        (await status(`${base}/admin/status`, { Cookie: cookie })).status,
        401,
        `${base} after logout`,
      );
      const page = await status(`${base}/admin`, { Cookie: cookie });
      assert.equal(page.status, 401);
      assert.match(page.body, /action="\/admin\/login"/);
    }
    await assert.rejects(feed.next(() => false, 20_000), /the feed ended/, "the open feed ends too");
    const post = await postForm(a, "/admin/keys", "key.create", cookie, { csrf, model: "m1" });
    assert.equal(post.status, 401, "the old cookie's form token opens nothing either");
    // A second logout of the ended session (another tab) records nothing more.
    const again = await fetch(`${a}/admin/logout`, {
      method: "POST",
      headers: { Cookie: cookie, Origin: a },
    });
    await again.body?.cancel();

    const trail = await listAudit(kv);
    assert.deepEqual(trail.map((r) => r.action), ["admin.logout", "admin.login"]);
    const [logout, login] = trail;
    assert.equal(logout.actor.session, login.actor.session);
    assert.match(login.actor.session ?? "", /^[0-9a-f]{8}$/);
    assert.equal(login.actor.address, "127.0.0.1");
    assert.ok(!JSON.stringify(trail).includes(cookie.split("=")[1]), "no cookie in the trail");
    const sessions = await Array.fromAsync(kv.list({ prefix: ["admin_sessions"] }));
    assert.equal(sessions.length, 0, "the ended session's row is gone");
  } finally {
    for (const feed of feeds) feed.close();
    for (const gateway of gateways) await gateway.stop();
    kv.close();
  }
});
