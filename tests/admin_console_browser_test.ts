/**
 * Managing the gateway from the admin page in a real headless Chromium: create a key and use it, rotate it
 * (the old secret works during the grace period and fails after it, on the gateway's injected clock), revoke
 * it, disable a server and see requests move to the other one, and have a forged form post refused. The page
 * with its charts is saved to tests/artifacts/admin-console.png.
 */
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { Scenario, USER_HELLO } from "./harness.ts";
import { ADMIN_TOKEN } from "./support/admin_session.ts";
import { HeadlessChromium } from "./support/browser.ts";

const ARTIFACTS = new URL("./artifacts/", import.meta.url);

async function chat(s: Scenario, secret: string): Promise<number> {
  const r = await s.gw.post("/v1/chat/completions", secret, { model: "m1", messages: USER_HELLO });
  await r.body?.cancel();
  return r.status;
}

/** Submits the form running `command` (within `row`, if given) and returns the answer page's notice. */
async function submit(page: Page, command: string, row?: string) {
  const scope = row ? page.locator(row) : page;
  await scope.locator(`form[data-command="${command}"] button[type=submit]`).click();
  await page.waitForLoadState("domcontentloaded");
  return page.locator("[data-notice]").first();
}

Deno.test("an admin manages keys and servers from the page", async () => {
  let clock = Date.now();
  await using s = await Scenario.start([{ name: "gpu-a" }, { name: "gpu-b" }], {
    config: { adminToken: ADMIN_TOKEN },
    now: () => clock,
  });
  // Earlier traffic, so the charts have a history to draw.
  const start = clock;
  const earlier = await s.gw.key({ name: "nightly batch" });
  for (const hoursAgo of [26 * 24, 19 * 24, 11 * 24, 4 * 24, 40, 31, 22, 15, 9, 5, 2]) {
    clock = start - hoursAgo * 3_600_000;
    for (let i = 0; i < 1 + (hoursAgo % 5); i++) assert.equal(await chat(s, earlier), 200);
  }
  clock = start;
  const chrome = await HeadlessChromium.launch();
  try {
    const context = await chrome.browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: s.gw.url });
    const page = await context.newPage();
    await page.goto(`${s.gw.url}/admin/keys`);
    await page.fill("#token", ADMIN_TOKEN);
    await page.click("button[type=submit]");
    await page.goto(`${s.gw.url}/admin/keys`);

    await page.fill('form[data-command="key.create"] input[name="model"]', "m1");
    await page.fill('form[data-command="key.create"] input[name="name"]', "browser key");
    const created = await submit(page, "key.create");
    assert.equal(await created.getAttribute("data-notice"), "secret");
    const first = await page.inputValue("input[data-secret]");
    assert.match(first, /^gwk_/);
    await page.click("button[data-copy]");
    await page.waitForSelector('button[data-copy="copied"]');
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), first);
    assert.equal(await chat(s, first), 200, "the new key works at once");

    const id = /Created key (key_\w+)\./.exec(await created.textContent() ?? "")?.[1];
    assert.ok(id);
    await page.click(`tr[data-key="${id}"] a[data-manage]`);
    await page.waitForSelector(`[data-key-page="${id}"]`);
    const revokeBox = await page.locator("section.danger-zone").boundingBox();
    const rotateBox = await page.locator('form[data-command="key.rotate"]').boundingBox();
    assert.ok(revokeBox && rotateBox && revokeBox.y > rotateBox.y + rotateBox.height, "Revoke is set apart");
    await page.fill('form[data-command="key.rotate"] input[name="grace"]', "90s");
    await page.click('form[data-command="key.rotate"] button[type=submit]');
    await page.waitForSelector('[data-notice="secret"]');
    assert.equal(await page.locator(`[data-key-page="${id}"]`).count(), 1, "the answer is the key's page");
    const second = await page.inputValue("input[data-secret]");
    assert.notEqual(second, first);
    assert.equal(await chat(s, first), 200, "the old secret works during the grace period");
    assert.equal(await chat(s, second), 200);
    clock += 89_000;
    assert.equal(await chat(s, first), 200);
    clock += 1_000;
    assert.equal(await chat(s, first), 401, "and not from the end of the grace period");
    assert.equal(await chat(s, second), 200);

    const revoked = await submit(page, "key.revoke");
    assert.match(await revoked.textContent() ?? "", /^Revoked key key_/);
    assert.equal(await chat(s, second), 401, "revoking ends the current secret too");

    const other = await s.gw.key();
    for (let i = 0; i < 6; i++) assert.equal(await chat(s, other), 200);
    assert.ok(s.fake("gpu-a").chats.length > 0, "both servers take requests while enabled");
    await page.goto(`${s.gw.url}/admin/servers`);
    const disabled = await submit(page, "server.disable", 'tr[data-server-row="gpu-a"]');
    assert.equal(await disabled.textContent(), 'Server "gpu-a" disabled.');
    const [a, b] = [s.fake("gpu-a").chats.length, s.fake("gpu-b").chats.length];
    for (let i = 0; i < 6; i++) assert.equal(await chat(s, other), 200);
    assert.deepEqual([s.fake("gpu-a").chats.length, s.fake("gpu-b").chats.length], [a, b + 6]);

    // Another site's page cannot read the form token; a post without it is refused and changes nothing.
    await page.evaluate(() => {
      const form = document.createElement("form");
      form.method = "post";
      form.action = "/admin/servers";
      for (const [name, value] of [["do", "server.enable"], ["target", "gpu-a"]]) {
        const input = document.createElement("input");
        Object.assign(input, { type: "hidden", name, value });
        form.append(input);
      }
      document.body.append(form);
      form.submit();
    });
    await page.waitForSelector('[data-notice="error"]');
    assert.match(await page.textContent('[data-notice="error"]') ?? "", /out of date or was not sent/);
    assert.equal((await s.gw.catalog.servers.get("gpu-a")).enabled, false);

    await page.goto(`${s.gw.url}/admin/audit`);
    const actions = await page.locator("tr[data-audit]").evaluateAll((rows) =>
      rows.map((r) => (r as HTMLElement).dataset.audit)
    );
    assert.deepEqual(actions, ["server.disable", "key.revoke", "key.rotate", "key.create", "admin.login"]);
    assert.equal((await page.content()).includes(first), false, "no secret in the audit trail");

    await s.gw.ledger.flush();
    await page.goto(`${s.gw.url}/admin`);
    await page.waitForSelector('[data-chart="requests-per-hour"] rect.bar');
    await Deno.mkdir(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: new URL("admin-console.png", ARTIFACTS).pathname, fullPage: true });
    await context.close();

    // The forms are plain HTML: without JavaScript they work the same.
    const plain = await chrome.browser.newContext({ javaScriptEnabled: false });
    const bare = await plain.newPage();
    await bare.goto(`${s.gw.url}/admin/users`);
    await bare.fill("#token", ADMIN_TOKEN);
    await bare.click("button[type=submit]");
    await bare.goto(`${s.gw.url}/admin/users`);
    await bare.fill('form[data-command="user.add"] input[name="name"]', "carol");
    await bare.fill('form[data-command="user.add"] input[name="daily-tokens"]', "5000");
    const added = await submit(bare, "user.add");
    assert.equal(await added.textContent(), 'Added user "carol".');
    assert.equal((await s.gw.catalog.users.get("carol")).dailyTokens, 5000);
    assert.equal(await bare.locator('tr[data-user-row="carol"]').count(), 1);
    await plain.close();
  } finally {
    await chrome.close();
  }
});
