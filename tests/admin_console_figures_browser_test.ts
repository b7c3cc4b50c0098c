/**
 * What the console shows, checked in a real headless Chromium against what the gateway did: the usage tables
 * add up to the totals (a row for requests without a key), refused requests are listed with their key, a key
 * over its daily quota shows a full bar with the counter the policy reads, an expired key is counted expired,
 * the Servers page shows a stopped server going down with the reason (without a reload) and its declared
 * slots, with a legend of the states; the audit page reads as "field: old → new"; the metrics page shows the
 * figures with the raw text one link away and a way back; chart labels are legible and there is a favicon.
 *
 * Screenshots go to tests/artifacts/; with UPDATE_DOCS_SCREENSHOTS=1 also to docs/ (the README's pictures).
 */
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { Scenario, USER_HELLO } from "./harness.ts";
import { ADMIN_TOKEN } from "./support/admin_session.ts";
import { HeadlessChromium } from "./support/browser.ts";
import { PATIENCE_MS } from "./support/wait_for.ts";
import { readTotals } from "../lib/usage/mod.ts";
import { listKeys, updateKey } from "../lib/store/keys.ts";

const ARTIFACTS = new URL("./artifacts/", import.meta.url);
const DOCS = new URL("../docs/", import.meta.url);
const HOUR = 3_600_000;

async function chat(s: Scenario, secret: string | undefined): Promise<number> {
  const r = await s.gw.post("/v1/chat/completions", secret, { model: "m1", messages: USER_HELLO });
  await r.body?.cancel();
  return r.status;
}

async function shot(page: Page, name: string): Promise<void> {
  await Deno.mkdir(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: new URL(name, ARTIFACTS).pathname, fullPage: true });
  if (Deno.env.get("UPDATE_DOCS_SCREENSHOTS") === "1") {
    await page.screenshot({ path: new URL(name, DOCS).pathname, fullPage: true });
  }
}

const cellNumbers = async (page: Page, table: string, row: string) =>
  (await page.locator(`[data-table="${table}"] tr[data-row="${row}"] td.num`).allTextContents())
    .map((t) => Number(t.replaceAll(",", "")));

/** The smallest rendered size, in CSS px, of the charts' axis labels. */
const smallestChartText = (page: Page) =>
  page.evaluate(() =>
    Math.min(
      ...[...document.querySelectorAll<SVGTextElement>(".chart svg text")].map((t) =>
        parseFloat(getComputedStyle(t).fontSize) * (t.ownerSVGElement!.getScreenCTM()!.a)
      ),
    )
  );

Deno.test("the console's figures add up and show quotas, health, audit and metrics", async () => {
  let offset = 0;
  await using s = await Scenario.start([{ name: "gpu-a", slots: 4 }, { name: "gpu-b" }], {
    config: { adminToken: ADMIN_TOKEN, probeIntervalMs: 200, probeTimeoutMs: 500 },
    probe: true,
    now: () => Date.now() + offset,
  });
  // History for the charts, on the gateway's clock.
  const batch = await s.gw.key({ name: "nightly batch" });
  for (const hoursAgo of [20 * 24, 9 * 24, 3 * 24, 30, 20, 7, 3]) {
    offset = -hoursAgo * HOUR;
    for (let i = 0; i < 1 + (hoursAgo % 4); i++) assert.equal(await chat(s, batch), 200);
  }
  offset = 0;

  await s.gw.catalog.users.add({ name: "ana", dailyTokens: 1000 });
  // The key spends its tokens; then the admin lowers its daily quota below them and it is refused.
  const capped = await s.gw.key({ name: "capped", user: "ana" });
  await s.gw.key({ name: "ended", expiresAt: new Date(Date.now() - HOUR).toISOString() });
  for (let i = 0; i < 8; i++) assert.equal(await chat(s, capped), 200);
  await s.gw.ledger.flush();
  const cappedId = (await listKeys(s.gw.kv)).find((k) => k.name === "capped")!.id;
  await updateKey(s.gw.kv, cappedId, { dailyTokens: 40 });
  await s.gw.deps.view.refresh();
  // A kept connection may hold the key as it was for a moment; the change is seen within a few requests.
  let status = 200;
  for (let i = 0; i < 20 && status === 200; i++) status = await chat(s, capped);
  assert.equal(status, 429);
  for (const secret of [undefined, "gwk_not-a-key", undefined]) assert.equal(await chat(s, secret), 401);
  await s.gw.ledger.flush();
  const used = (await readTotals(s.gw.kv, "key", cappedId, new Date())).day;
  assert.ok(used >= 40, `the key used ${used} of 40`);

  const chrome = await HeadlessChromium.launch();
  try {
    const context = await chrome.browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${s.gw.url}/admin`);
    await page.fill("#token", ADMIN_TOKEN);
    await page.click("button[type=submit]");
    await page.waitForSelector('[data-server="gpu-a"][data-health="up"]', { timeout: PATIENCE_MS });
    await page.waitForSelector('[data-server="gpu-b"][data-health="up"]', { timeout: PATIENCE_MS });

    // Every request is in exactly one row of each table, the keyless ones too.
    const total = await cellNumbers(page, "Top keys", "total");
    const noKey = await cellNumbers(page, "Top keys", "no-key");
    assert.equal(noKey[0], 3, "three requests without a valid key");
    assert.equal(noKey[1], 3, "all three not ok");
    const keyRows = await page.locator('[data-table="Top keys"] tbody tr').evaluateAll((rows) =>
      rows.map((r) => Number(r.querySelector("td.num")!.textContent!.replaceAll(",", "")))
    );
    assert.equal(keyRows.reduce((a, b) => a + b, 0), total[0], "the key rows add up to the total");
    const userRows = await page.locator('[data-table="Users"] tbody tr').evaluateAll((rows) =>
      rows.map((r) => Number(r.querySelector("td.num")!.textContent!.replaceAll(",", "")))
    );
    assert.equal(userRows.reduce((a, b) => a + b, 0), total[0], "the user rows add up to the total");
    const totalsLine = await page.textContent("[data-totals]");
    assert.match(totalsLine ?? "", new RegExp(`: ${total[0]} requests`));
    const rejected = page.locator('[data-table="rejected"] tbody tr');
    assert.equal(await rejected.count(), 4, "three without a key and one over quota");
    assert.equal(await page.locator('[data-table="rejected"] tr', { hasText: "no key" }).count(), 3);
    const overQuota = page.locator(`[data-table="rejected"] tr[data-key-id="${cappedId}"]`);
    assert.match(await overQuota.textContent() ?? "", /capped.*rejected\s*429/);

    assert.ok(await smallestChartText(page) >= 11, "chart labels at 11 px or more");
    const icon = await page.getAttribute('link[rel="icon"]', "href");
    const iconAnswer = await page.request.get(`${s.gw.url}${icon}`);
    assert.equal(iconAnswer.status(), 200);
    assert.equal(iconAnswer.headers()["content-type"], "image/svg+xml");
    assert.equal(
      (await page.textContent("[data-servers-summary]"))?.trim(),
      "2 of 2 up",
      "probed before the shot",
    );
    await shot(page, "admin-page.png");

    // The keys page: the expired key is not counted active, the capped one shows its full bar.
    await page.click('.top a[href="/admin/keys"]');
    assert.equal(await page.textContent("[data-key-counts]"), "2 active, 1 expired of 3");
    const bar = page.locator(`tr[data-key="${cappedId}"] [data-quota="day"]`);
    assert.equal(await bar.getAttribute("data-used"), String(used), "the counter the policy reads");
    assert.equal(await bar.getAttribute("data-cap"), "40");
    assert.match(await bar.getAttribute("class") ?? "", /\bover\b/);
    assert.match(await bar.textContent() ?? "", /used up/);
    await shot(page, "admin-keys.png");
    await page.goto(`${s.gw.url}/admin/users`);
    const anaBar = page.locator('tr[data-user-row="ana"] [data-quota="day"]');
    assert.equal(await anaBar.getAttribute("data-used"), String(used), "ana's only key is the capped one");
    assert.equal(await anaBar.getAttribute("data-cap"), "1000");
    await page.click('a[data-manage="ana"]');
    assert.equal(
      await page.getAttribute('[data-user-page="ana"] [data-quota="day"]', "data-used"),
      String(used),
    );

    // Renamed on the key's own page, the change reads as words on the audit page.
    await page.goto(`${s.gw.url}/admin/keys?key=${cappedId}`);
    await page.fill('form[data-command="key.update"] input[name="name"]', "capped key");
    await page.click('form[data-command="key.update"] button[type=submit]');
    await page.waitForSelector('[data-notice="done"]');
    await page.goto(`${s.gw.url}/admin/audit`);
    const entry = page.locator('tr[data-audit="key.update"]').first();
    assert.equal(await entry.locator('li[data-field="name"]').textContent(), "name: capped → capped key");
    assert.match(await entry.textContent() ?? "", new RegExp(`capped key \\(gwk_\\S+\\)${cappedId}`));

    // The Servers page: health with its reason, live; declared slots; the legend; no "enabled" badge.
    await page.goto(`${s.gw.url}/admin/servers`);
    const health = (name: string) => page.locator(`tr[data-server-row="${name}"] [data-server-health]`);
    await page.waitForSelector('tr[data-server-row="gpu-b"] [data-server-health="up"]');
    assert.equal(await page.locator(".badge", { hasText: "enabled" }).count(), 0);
    assert.match(
      await page.textContent('tr[data-server-row="gpu-a"] [data-server-slots]') ?? "",
      /^4 slots declared/,
    );
    await page.evaluate(() => (globalThis as Record<string, unknown>).stillSamePage = true);
    await s.fake("gpu-b").pause();
    await page.waitForSelector('tr[data-server-row="gpu-b"] [data-server-health="down"]', {
      timeout: PATIENCE_MS,
    });
    assert.equal(await page.evaluate(() => (globalThis as Record<string, unknown>).stillSamePage), true);
    assert.ok((await health("gpu-b").locator(".reason").textContent())?.trim(), "the reason is shown");
    assert.match(await health("gpu-b").textContent() ?? "", /checked \d+ s ago/);
    assert.equal(await health("gpu-a").getAttribute("data-server-health"), "up");
    await page.click("[data-legend] summary");
    assert.match(await page.textContent("[data-legend]") ?? "", /half-open.*one trial request/s);
    await shot(page, "admin-servers.png");
    s.fake("gpu-b").resume();
    // Each server is edited and removed on its own page, removing set apart below the settings.
    await page.click('a[data-manage="gpu-b"]');
    await page.waitForSelector('[data-server-page="gpu-b"] [data-server-health]');
    const settings = await page.locator('form[data-command="server.update"]').boundingBox();
    const removal = await page.locator("section.danger-zone").boundingBox();
    assert.ok(settings && removal && removal.y > settings.y + settings.height, "Remove is set apart");
    assert.equal(await page.locator('section.danger-zone form[data-command="server.remove"]').count(), 1);

    // Metrics inside the console, the raw text one link away, and back.
    await page.click('.top a[href="/admin/metrics"]');
    const requests = await page.textContent('[data-figure="requests"] .figure-value');
    assert.ok(Number(requests?.replaceAll(",", "")) >= total[0], `requests figure ${requests}`);
    assert.ok(await page.locator('tr[data-metric="gateway_requests_total"]').count() > 0);
    assert.match(await page.textContent('[data-figure="duration"] .figure-value') ?? "", /^\d.* mean$/);
    await shot(page, "admin-metrics.png");
    await page.click("[data-raw-link]");
    assert.match(await page.textContent("pre.raw") ?? "", /^# HELP gateway_/m);
    await page.click('a[href="/admin/metrics"]:has-text("Main figures")');
    await page.waitForSelector('[data-metrics="figures"]');

    // On a phone the charts' labels stay legible and nothing is wider than the screen.
    await page.goto(`${s.gw.url}/admin`);
    await page.setViewportSize({ width: 375, height: 812 });
    assert.ok(await smallestChartText(page) >= 11, "chart labels at 11 px or more on a phone");
    for (const path of ["/admin", `/admin/keys?key=${cappedId}`, "/admin/servers", "/admin/metrics"]) {
      if (path !== "/admin") await page.goto(`${s.gw.url}${path}`);
      const overflow = await page.evaluate<number>("document.documentElement.scrollWidth - innerWidth");
      assert.ok(overflow <= 0, `${path} is ${overflow}px wider than a phone screen`);
    }
    await context.close();
  } finally {
    await chrome.close();
  }
});
