/**
 * The admin door's trail: secrets audited without their values, no entry for a change that changes nothing,
 * and the actor's own address behind a trusted proxy.
 */
import assert from "node:assert/strict";
import { runAdmin } from "../lib/admin/cli.ts";
import { listAudit } from "../lib/audit/mod.ts";
import { Scenario } from "./harness.ts";
import { ADMIN_TOKEN, formToken, logIn, postForm } from "./support/admin_session.ts";

const BEARER = { Authorization: `Bearer ${ADMIN_TOKEN}` };

async function admin(kv: Deno.Kv, args: string[]): Promise<number> {
  return await runAdmin(args, { kv, out: () => {}, err: () => {} });
}

Deno.test("a replaced server API key is audited as changed, without its value; an update that changes nothing leaves no entry", async () => {
  using kv = await Deno.openKv(":memory:");
  const server = ["--url", "http://127.0.0.1:9", "--model", "m1", "--kind", "openai"];
  assert.equal(
    await admin(kv, ["server", "add", "--name", "gpu", ...server, "--api-key", "sk-first-secret"]),
    0,
  );
  assert.equal(await admin(kv, ["server", "update", "gpu", "--api-key", "sk-second-secret"]), 0);
  assert.equal(await admin(kv, ["server", "update", "gpu", "--api-key", "sk-second-secret"]), 0);
  assert.equal(await admin(kv, ["server", "update", "gpu", "--weight", "1"]), 0);
  assert.equal(await admin(kv, ["server", "enable", "gpu"]), 0);
  assert.equal(await admin(kv, ["server", "update", "gpu", "--api-key", "none"]), 0);

  const trail = await listAudit(kv);
  assert.deepEqual(trail.map((r) => r.action), ["server.update", "server.update", "server.add"]);
  assert.deepEqual(trail[0].changes, {
    hasApiKey: { before: true, after: false },
    apiKey: { before: "set" },
  });
  assert.deepEqual(trail[1].changes, { apiKey: { before: "set", after: "changed" } });
  assert.deepEqual(trail[2].changes.apiKey, { after: "set" });
  const text = JSON.stringify(trail);
  for (const secret of ["sk-first-secret", "sk-second-secret"]) assert.ok(!text.includes(secret));
});

Deno.test("behind a trusted proxy the page's and the API's actor is the client's address, not the proxy's", async () => {
  for (
    const [trustProxy, page, api] of [
      [["127.0.0.1"], "198.51.100.7", "198.51.100.8"],
      [[], "127.0.0.1", "127.0.0.1"],
    ] as const
  ) {
    await using s = await Scenario.start([{ name: "gpu" }], {
      config: { adminToken: ADMIN_TOKEN, trustProxy: [...trustProxy] },
    });
    const viaProxy = { "X-Forwarded-For": "198.51.100.7" };
    const { cookie } = await logIn(s.gw.url, ADMIN_TOKEN, viaProxy);
    const csrf = await formToken(s.gw.url, cookie);
    const made = await postForm(
      s.gw.url,
      "/admin/keys",
      "key.create",
      cookie,
      { csrf, model: "m1" },
      viaProxy,
    );
    assert.equal(made.kind, "secret", made.text);
    const answer = await fetch(`${s.gw.url}/admin/api/commands`, {
      method: "POST",
      headers: { ...BEARER, "Content-Type": "application/json", "X-Forwarded-For": "198.51.100.8" },
      body: JSON.stringify({ argv: ["user", "add", "--name", "bob"] }),
    });
    assert.equal(answer.status, 200, await answer.text());
    const trail = await listAudit(s.gw.kv);
    assert.deepEqual(
      trail.map((r) => [r.action, r.actor.kind, r.actor.address]),
      [["user.add", "api", api], ["key.create", "page", page], ["admin.login", "page", page]],
      `trusting ${JSON.stringify(trustProxy)}`,
    );
  }
});
