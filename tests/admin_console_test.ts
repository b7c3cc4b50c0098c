/**
 * The admin page's forms run the CLI's commands: the same bad input gets the same message from both, a change
 * made on the page works at once and is audited as the page session's, and no form post is accepted without
 * the session's form token.
 */
import assert from "node:assert/strict";
import { runAdmin } from "../lib/admin/cli.ts";
import { listAudit } from "../lib/audit/mod.ts";
import { getKey, listKeys } from "../lib/store/keys.ts";
import { Scenario, USER_HELLO } from "./harness.ts";
import { ADMIN_TOKEN, formToken, logIn, postForm } from "./support/admin_session.ts";

async function cli(kv: Deno.Kv, args: string[]) {
  const err: string[] = [];
  const code = await runAdmin(args, { kv, out: () => {}, err: (line) => err.push(line) });
  return { code, line: err[0] ?? "" };
}

Deno.test("the page and the CLI refuse the same bad inputs with the same messages", async () => {
  await using s = await Scenario.start([{ name: "gpu" }], { config: { adminToken: ADMIN_TOKEN } });
  const { cookie } = await logIn(s.gw.url);
  const csrf = await formToken(s.gw.url, cookie);
  const id = (await cli(s.gw.kv, ["key", "create", "--model", "m1"]), (await listKeys(s.gw.kv))[0].id);
  const cases: [string[], string, string, Record<string, string>][] = [
    [["key", "create"], "/admin/keys", "key.create", {}],
    [["key", "create", "--model", "has space"], "/admin/keys", "key.create", { model: "has space" }],
    [["key", "create", "--model", "m1", "--rpm", "0"], "/admin/keys", "key.create", {
      model: "m1",
      rpm: "0",
    }],
    [["key", "create", "--model", "m1", "--allow-ip", "10.0.0.300"], "/admin/keys", "key.create", {
      model: "m1",
      "allow-ip": "10.0.0.300",
    }],
    [["key", "create", "--model", "m1", "--cluster", "ghost"], "/admin/keys", "key.create", {
      model: "m1",
      cluster: "ghost",
    }],
    [
      ["key", "create", "--model", "m1", "--max-ctx", "4096", "--default-ctx", "9000"],
      "/admin/keys",
      "key.create",
      {
        model: "m1",
        "max-ctx": "4096",
        "default-ctx": "9000",
      },
    ],
    [["key", "create", "--model", "m1", "--expires", "tomorrow"], "/admin/keys", "key.create", {
      model: "m1",
      expires: "tomorrow",
    }],
    [["key", "rotate", id, "--grace", "1w"], "/admin/keys", "key.rotate", { target: id, grace: "1w" }],
    [["key", "update", id], "/admin/keys", "key.update", { target: id, "was:rpm": "", rpm: "" }],
    [["key", "revoke", "key_nope"], "/admin/keys", "key.revoke", { target: "key_nope" }],
    [["server", "add", "--name", "s1", "--url", "ftp://x", "--model", "m1"], "/admin/servers", "server.add", {
      name: "s1",
      url: "ftp://x",
      model: "m1",
    }],
    [
      ["server", "add", "--name", "bad name", "--url", "http://x", "--model", "m1"],
      "/admin/servers",
      "server.add",
      {
        name: "bad name",
        url: "http://x",
        model: "m1",
      },
    ],
    [
      ["server", "add", "--name", "gpu", "--url", "http://x", "--model", "m1"],
      "/admin/servers",
      "server.add",
      {
        name: "gpu",
        url: "http://x",
        model: "m1",
      },
    ],
    [["server", "remove", "ghost"], "/admin/servers", "server.remove", { target: "ghost" }],
    [["cluster", "add", "--name", "c1", "--server", "ghost"], "/admin/servers", "cluster.add", {
      name: "c1",
      server: "ghost",
    }],
    [["user", "add", "--name", "none"], "/admin/users", "user.add", { name: "none" }],
    [["user", "update", "ghost", "--daily-tokens", "5"], "/admin/users", "user.update", {
      target: "ghost",
      "daily-tokens": "5",
    }],
  ];
  for (const [args, path, command, fields] of cases) {
    const expected = await cli(s.gw.kv, args);
    assert.notEqual(expected.code, 0, args.join(" "));
    const page = await postForm(s.gw.url, path, command, cookie, { csrf, ...fields });
    assert.equal(page.kind, "error", `${path}: ${page.text}`);
    assert.equal(expected.line, `admin: ${args[0]} ${args[1]}: ${page.text}`);
    assert.equal(page.status, expected.code === 2 ? 422 : 409);
  }
  assert.deepEqual(
    (await listAudit(s.gw.kv)).map((r) => r.action),
    ["key.create", "admin.login"],
    "refusals leave no record",
  );
});

Deno.test("a key created and edited on the page works at once and is audited as the page session's", async () => {
  await using s = await Scenario.start([{ name: "gpu" }], { config: { adminToken: ADMIN_TOKEN } });
  const { cookie } = await logIn(s.gw.url);
  const csrf = await formToken(s.gw.url, cookie);
  const created = await postForm(s.gw.url, "/admin/keys", "key.create", cookie, [
    ["csrf", csrf],
    ["model", "m1"],
    ["name", "page key"],
    ["tools", "off"],
    ["tools", "on"],
    ["vision", "off"],
  ]);
  assert.equal(created.status, 200);
  assert.equal(created.kind, "secret");
  const secret = /data-secret[^>]*value="(gwk_[^"]+)"|value="(gwk_[^"]+)"/.exec(created.html);
  const key = secret?.[1] ?? secret?.[2];
  assert.ok(key, "the secret is on the answer page");
  const answer = await s.gw.post("/v1/chat/completions", key, { model: "m1", messages: USER_HELLO });
  assert.equal(answer.status, 200);
  await answer.body?.cancel();

  const [stored] = await listKeys(s.gw.kv);
  assert.equal(stored.tools, true);
  assert.equal(stored.vision, false);
  const edited = await postForm(s.gw.url, "/admin/keys", "key.update", cookie, [
    ["csrf", csrf],
    ["target", stored.id],
    ["was:name", "page key"],
    ["name", ""],
    ["was:rpm", ""],
    ["rpm", "5"],
    ["was:model", "m1"],
    ["model", "m1"],
    ["was:tools", "on"],
    ["tools", "off"],
  ]);
  assert.equal(edited.kind, "done", edited.text);
  assert.equal(edited.text, `Updated key ${stored.id}.`);
  const after = await getKey(s.gw.kv, stored.id);
  assert.deepEqual([after.name, after.rpm, after.tools, after.model], [undefined, 5, false, "m1"]);

  const [update, create] = await listAudit(s.gw.kv);
  assert.equal(create.action, "key.create");
  assert.equal(update.actor.kind, "page");
  assert.match(update.actor.session ?? "", /^[0-9a-f]{8}$/);
  assert.equal(update.actor.address, "127.0.0.1");
  assert.deepEqual(update.changes, {
    name: { before: "page key" },
    rpm: { after: 5 },
    tools: { before: true, after: false },
  });
  assert.equal(JSON.stringify(await listAudit(s.gw.kv)).includes(key), false);
  const auditPage = await (await fetch(`${s.gw.url}/admin/audit`, { headers: { Cookie: cookie } })).text();
  assert.match(auditPage, /data-audit="key.update"/);
});

Deno.test("a form post without the session's token, or from another site, changes nothing", async () => {
  await using s = await Scenario.start([{ name: "gpu" }], { config: { adminToken: ADMIN_TOKEN } });
  const mine = await logIn(s.gw.url);
  // A session is named by its expiry, to the millisecond: log in again until the two sessions differ.
  let other = await logIn(s.gw.url);
  for (let i = 0; i < 100 && other.cookie === mine.cookie; i++) other = await logIn(s.gw.url);
  assert.notEqual(other.cookie, mine.cookie, "two logins open two sessions");
  const otherToken = await formToken(s.gw.url, other.cookie);
  const myToken = await formToken(s.gw.url, mine.cookie);
  assert.notEqual(otherToken, myToken, "each session has its own form token");
  const fields = { name: "gpu2", url: "http://127.0.0.1:9", model: "m1" };
  const forged = [
    await postForm(s.gw.url, "/admin/servers", "server.add", mine.cookie, fields),
    await postForm(s.gw.url, "/admin/servers", "server.add", mine.cookie, { ...fields, csrf: "" }),
    // The other session's token, valid as it is (it works below), replayed with this session's cookie.
    await postForm(s.gw.url, "/admin/servers", "server.add", mine.cookie, { ...fields, csrf: otherToken }),
    await postForm(s.gw.url, "/admin/servers", "server.add", mine.cookie, {
      ...fields,
      csrf: myToken.slice(0, -2) + (myToken.endsWith("AA") ? "BB" : "AA"),
    }),
    await postForm(s.gw.url, "/admin/servers", "server.add", mine.cookie, { ...fields, csrf: myToken }, {
      Origin: "https://evil.example",
    }),
  ];
  for (const r of forged) assert.deepEqual([r.status, r.kind], [403, "error"]);
  assert.match(forged[0].text, /out of date or was not sent from the admin page/);
  const noSession = await postForm(s.gw.url, "/admin/servers", "server.add", "", {
    ...fields,
    csrf: otherToken,
  });
  assert.equal(noSession.status, 401);
  assert.deepEqual((await s.gw.catalog.servers.list()).map((x) => x.name), ["gpu"]);
  assert.deepEqual(
    (await listAudit(s.gw.kv)).filter((r) => r.action !== "admin.login"),
    [],
    "the logins alone are audited",
  );
  const wrongPlace = await postForm(s.gw.url, "/admin/users", "server.add", mine.cookie, {
    ...fields,
    csrf: myToken,
  });
  assert.equal(wrongPlace.status, 400, "a section runs only its own commands");

  // The replayed token was a good one: with its own session's cookie it is accepted.
  const own = await postForm(s.gw.url, "/admin/servers", "server.add", other.cookie, {
    ...fields,
    csrf: otherToken,
  });
  assert.equal(own.kind, "done", own.text);
  assert.deepEqual((await s.gw.catalog.servers.list()).map((x) => x.name).sort(), ["gpu", "gpu2"]);
});
