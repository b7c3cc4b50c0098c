/**
 * The admin page, its feed, its status and the metrics refuse everyone without the admin token, and stay
 * closed when no token is configured; the login form sets a session cookie with safe flags.
 */
import assert from "node:assert/strict";
import { Scenario, USER_HELLO } from "./harness.ts";
import { ADMIN_TOKEN, logIn } from "./support/admin_session.ts";
import { manifest } from "../routes.gen.ts";

const ADMIN_PATHS = ["/admin", "/admin/feed", "/admin/status", "/metrics"];

async function get(base: string, path: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${base}${path}`, { headers });
  return {
    status: response.status,
    type: response.headers.get("content-type") ?? "",
    text: await response.text(),
  };
}

Deno.test("without GATEWAY_ADMIN_TOKEN every admin path is closed, whatever is presented", async () => {
  await using s = await Scenario.start([{ name: "secret-gpu" }]);
  for (const path of ADMIN_PATHS) {
    for (
      const headers of [{}, { Authorization: "Bearer " }, { Authorization: "Bearer anything" }] as Record<
        string,
        string
      >[]
    ) {
      const r = await get(s.gw.url, path, headers);
      assert.equal(r.status, 403, `${path} ${JSON.stringify(headers)}`);
      assert.ok(!r.text.includes("secret-gpu"), `${path} leaks data`);
    }
  }
  const login = await logIn(s.gw.url, "");
  assert.equal(login.response.status, 403);
  assert.equal(login.setCookie, "");
  // Every method of every admin route, as a same-origin form post would send it.
  for (const { path, module } of manifest) {
    if (!path.startsWith("/admin") && path !== "/metrics") continue;
    for (const method of Object.keys(module.handlers(s.gw.deps))) {
      const r = await fetch(`${s.gw.url}${path}`, {
        method,
        headers: { Origin: s.gw.url, "Content-Type": "application/x-www-form-urlencoded" },
        ...(method === "GET" || method === "HEAD" ? {} : { body: "token=" }),
        redirect: "manual",
      });
      await r.body?.cancel();
      assert.equal(r.status, 403, `${method} ${path}`);
    }
  }
});

Deno.test("without the token the page shows a login form and the endpoints answer 401 JSON", async () => {
  // Each wrong token from an address of its own (through a trusted proxy), below the throttle's free tries.
  await using s = await Scenario.start([{ name: "secret-gpu" }], {
    config: { adminToken: ADMIN_TOKEN, trustProxy: ["127.0.0.1"] },
  });
  let client = 0;
  const from = (headers: Record<string, string>) => ({
    ...headers,
    "X-Forwarded-For": `192.0.2.${++client}`,
  });
  const wrong: Record<string, string>[] = [
    {},
    { Authorization: "Bearer wrong" },
    { Authorization: `Bearer ${ADMIN_TOKEN}x` },
    { Authorization: `Bearer ${ADMIN_TOKEN.slice(0, -1)}` },
    { Authorization: `Basic ${btoa(`admin:${ADMIN_TOKEN}`)}` },
    { Cookie: "gw_admin=1" },
    { Cookie: `gw_admin=${ADMIN_TOKEN}` },
    { Cookie: `gw_admin=${Date.now() + 60_000}.AAAA` },
  ];
  for (const headers of wrong) {
    const page = await get(s.gw.url, "/admin", from(headers));
    assert.equal(page.status, 401, JSON.stringify(headers));
    assert.match(page.text, /<form method="post" action="\/admin\/login"/);
    assert.ok(!page.text.includes("secret-gpu"));
    for (const path of ["/admin/feed", "/admin/status", "/metrics"]) {
      const r = await get(s.gw.url, path, from(headers));
      assert.equal(r.status, 401, `${path} ${JSON.stringify(headers)}`);
      assert.match(r.type, /application\/json/);
      assert.equal(JSON.parse(r.text).error.code, "admin_unauthenticated");
      assert.ok(!r.text.includes("secret-gpu"));
    }
  }
  const bearer = await get(s.gw.url, "/admin/status", { Authorization: `Bearer ${ADMIN_TOKEN}` });
  assert.equal(bearer.status, 200);
  assert.equal(JSON.parse(bearer.text).health.servers[0].name, "secret-gpu");
});

Deno.test("logging in sets an HttpOnly, SameSite=Strict session cookie that opens the page", async () => {
  await using s = await Scenario.start([{ name: "gpu-a" }], { config: { adminToken: ADMIN_TOKEN } });
  const bad = await logIn(s.gw.url, "not-the-token");
  assert.equal(bad.response.status, 401);
  assert.equal(bad.setCookie, "");

  const { response, setCookie, cookie } = await logIn(s.gw.url);
  assert.equal(response.status, 303);
  assert.equal(response.headers.get("location"), "/admin");
  assert.match(setCookie, /; HttpOnly/);
  assert.match(setCookie, /; SameSite=Strict/);
  assert.doesNotMatch(setCookie, /; Secure/, "plain http gets no Secure flag, or the browser would drop it");
  assert.ok(!setCookie.includes(ADMIN_TOKEN), "the cookie must not carry the token");

  const page = await get(s.gw.url, "/admin", { Cookie: cookie });
  assert.equal(page.status, 200);
  assert.match(page.type, /text\/html/);
  assert.match(page.text, /data-island="ServerHealth"/);
  assert.match(page.text, /data-server="gpu-a"/);
  assert.match(page.text, /src="\/static\/bundle\/islands\.js\?v=[0-9a-f]{12}"/);
  const csp = (await fetch(`${s.gw.url}/admin`, { headers: { Cookie: cookie } })).headers;
  assert.match(csp.get("content-security-policy") ?? "", /script-src 'self'/);
  assert.equal(csp.get("x-frame-options"), "DENY");

  // Every spelling but the issued one is refused, the last character's spare bits included.
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  const last = alphabet.indexOf(cookie.at(-1)!);
  for (const c of [alphabet[last + 1], alphabet[last + 3], alphabet[(last + 4) % 64]]) {
    assert.equal((await get(s.gw.url, "/admin", { Cookie: cookie.slice(0, -1) + c })).status, 401, c);
  }
  const dot = cookie.indexOf(".");
  const first = cookie[dot + 1] === "A" ? "B" : "A";
  const early = cookie.slice(0, dot + 1) + first + cookie.slice(dot + 2);
  assert.equal((await get(s.gw.url, "/admin", { Cookie: early })).status, 401);
});

Deno.test("a login or logout posted from another site is refused", async () => {
  await using s = await Scenario.start([{ name: "a" }], { config: { adminToken: ADMIN_TOKEN } });
  const foreign = await logIn(s.gw.url, ADMIN_TOKEN, { Origin: "https://evil.example" });
  assert.equal(foreign.response.status, 403);
  assert.equal(foreign.setCookie, "");
  const crossSite = await logIn(s.gw.url, ADMIN_TOKEN, { "Sec-Fetch-Site": "cross-site" });
  assert.equal(crossSite.response.status, 403);

  const own = await logIn(s.gw.url, ADMIN_TOKEN, { Origin: s.gw.url });
  assert.equal(own.response.status, 303);
  const logout = await fetch(`${s.gw.url}/admin/logout`, {
    method: "POST",
    redirect: "manual",
    headers: { Cookie: own.cookie, Origin: s.gw.url },
  });
  await logout.body?.cancel();
  assert.equal(logout.status, 303);
  assert.match(logout.headers.get("set-cookie") ?? "", /^gw_admin=; Max-Age=0/);
});

Deno.test("the page's assets are served without data and with long caching", async () => {
  await using s = await Scenario.start([{ name: "a" }], { config: { adminToken: ADMIN_TOKEN } });
  for (
    const [path, type] of [["/static/admin.css", /text\/css/], [
      "/static/bundle/islands.js",
      /javascript/,
    ]] as const
  ) {
    const r = await fetch(`${s.gw.url}${path}`);
    assert.equal(r.status, 200, path);
    assert.match(r.headers.get("content-type") ?? "", type);
    assert.match(r.headers.get("cache-control") ?? "", /immutable/);
    assert.ok((await r.text()).length > 100);
  }
  const missing = await fetch(`${s.gw.url}/static/../deno.json`);
  await missing.body?.cancel();
  assert.equal(missing.status, 404);
  const chat = await s.gw.post("/v1/chat/completions", await s.gw.key(), {
    model: "x",
    messages: USER_HELLO,
  });
  assert.equal(chat.status, 200, "the chat paths are untouched by the admin routes");
  await chat.body?.cancel();
});

Deno.test("the cookie is Secure behind a trusted TLS proxy, and an untrusted X-Forwarded-Proto is ignored", async () => {
  for (const [trustProxy, secure] of [[["127.0.0.1"], true], [["10.0.0.0/8"], false]] as const) {
    await using s = await Scenario.start([{ name: "a" }], {
      config: { adminToken: ADMIN_TOKEN, trustProxy: [...trustProxy] },
    });
    const { setCookie } = await logIn(s.gw.url, ADMIN_TOKEN, { "X-Forwarded-Proto": "https" });
    assert.equal(/; Secure/.test(setCookie), secure, `trusting ${trustProxy}`);
  }
});
