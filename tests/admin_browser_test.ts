/**
 * The admin page in a real headless Chromium: log in, see the servers, watch a stopped backend turn down
 * without a reload, see a request appear in the usage tables, and fit a phone screen. Screenshots go to
 * tests/artifacts/.
 */
import assert from "node:assert/strict";
import { Scenario, USER_HELLO } from "./harness.ts";
import { ADMIN_TOKEN } from "./support/admin_session.ts";
import { HeadlessChromium } from "./support/browser.ts";
import { PATIENCE_MS } from "./support/wait_for.ts";

const ARTIFACTS = new URL("./artifacts/", import.meta.url);

Deno.test("an admin logs in and watches servers and usage change live", async () => {
  await using s = await Scenario.start([{ name: "gpu-a" }, { name: "gpu-b" }], {
    config: { adminToken: ADMIN_TOKEN, probeIntervalMs: 200, probeTimeoutMs: 500 },
    probe: true,
  });
  const chrome = await HeadlessChromium.launch();
  try {
    const context = await chrome.browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const foreign: string[] = [];
    page.on("request", (r) => {
      if (!r.url().startsWith(s.gw.url)) foreign.push(r.url());
    });

    await page.goto(`${s.gw.url}/admin`);
    assert.equal(await page.locator("[data-server]").count(), 0, "no data before logging in");
    await page.fill("#token", ADMIN_TOKEN);
    await page.click("button[type=submit]");
    await page.waitForSelector('[data-island="ServerHealth"]');
    assert.equal(page.url(), `${s.gw.url}/admin`);
    const cookie = (await context.cookies()).find((c) => c.name === "gw_admin");
    assert.ok(cookie?.httpOnly);
    assert.equal(cookie?.sameSite, "Strict");

    await page.waitForSelector('[data-feed="live"]');
    await page.waitForSelector('[data-server="gpu-a"][data-health="up"]');
    await page.waitForSelector('[data-server="gpu-b"][data-health="up"]');
    await page.evaluate(() => (globalThis as Record<string, unknown>).stillSamePage = true);

    await s.fake("gpu-b").pause();
    await page.waitForSelector('[data-server="gpu-b"][data-health="down"]', { timeout: PATIENCE_MS });
    assert.equal(await page.getAttribute('[data-server="gpu-a"]', "data-health"), "up");
    assert.equal(await page.evaluate(() => (globalThis as Record<string, unknown>).stillSamePage), true);

    const secret = await s.gw.key({ name: "e2e key" });
    const answer = await s.gw.post("/v1/chat/completions", secret, { model: "x", messages: USER_HELLO });
    assert.equal(answer.status, 200);
    await answer.body?.cancel();
    const row = page.locator('[data-table="Top keys"] tbody tr', { hasText: "e2e key" });
    await row.waitFor({ timeout: PATIENCE_MS });
    assert.equal((await row.locator("td").nth(2).textContent())?.trim(), "1", "one request counted");
    await page.click('button[role="tab"]:has-text("This month")');
    assert.equal((await row.locator("td").nth(2).textContent())?.trim(), "1");

    await Deno.mkdir(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: new URL("admin-desktop.png", ARTIFACTS).pathname, fullPage: true });

    await page.setViewportSize({ width: 375, height: 812 });
    const overflow = await page.evaluate<number>("document.documentElement.scrollWidth - innerWidth");
    assert.ok(overflow <= 0, `the page is ${overflow}px wider than a phone screen`);
    await page.screenshot({ path: new URL("admin-phone.png", ARTIFACTS).pathname, fullPage: true });

    assert.deepEqual(foreign, [], "the page loads nothing from outside the gateway");
    await context.close();
  } finally {
    await chrome.close();
  }
});
